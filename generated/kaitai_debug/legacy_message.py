# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/legacy_message.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import kafka_enums
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class LegacyMessage(KaitaiStruct):
    """One log entry of the legacy message formats: v0 (Kafka 0.8-0.9) and v1 (0.10, which adds
    the timestamp), from its offset. message_size counts the bytes after itself, so the entry
    occupies 12 + message_size bytes.
    
    The CRC (CRC-32, IEEE) covers the bytes from magic to the end; this spec does not check it.
    A compressed message is a wrapper: its value holds, compressed, an inner message set
    (legacy entries back to back, which record_set.ksy parses once decompressed). In v1, the
    inner offsets are relative (0, 1, ...) and the wrapper's offset is that of the last inner
    message; in v0 they are absolute.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#messageset
    
    
    .. seealso::
       LegacyRecord - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java
    """
    SEQ_FIELDS = ["offset", "message_size", "crc", "magic", "attributes", "timestamp", "len_key", "key", "len_value", "value"]
    def __init__(self, _io, _parent=None, _root=None):
        super(LegacyMessage, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['offset']['start'] = self._io.pos()
        self.offset = self._io.read_s8be()
        self._debug['offset']['end'] = self._io.pos()
        self._debug['message_size']['start'] = self._io.pos()
        self.message_size = self._io.read_s4be()
        self._debug['message_size']['end'] = self._io.pos()
        self._debug['crc']['start'] = self._io.pos()
        self.crc = self._io.read_u4be()
        self._debug['crc']['end'] = self._io.pos()
        self._debug['magic']['start'] = self._io.pos()
        self.magic = self._io.read_s1()
        self._debug['magic']['end'] = self._io.pos()
        if not  ((self.magic == 0) or (self.magic == 1)) :
            raise kaitaistruct.ValidationNotAnyOfError(self.magic, self._io, u"/seq/3")
        self._debug['attributes']['start'] = self._io.pos()
        self.attributes = LegacyMessage.Attributes(self._io, self, self._root)
        self.attributes._read()
        self._debug['attributes']['end'] = self._io.pos()
        if self.magic == 1:
            pass
            self._debug['timestamp']['start'] = self._io.pos()
            self.timestamp = self._io.read_s8be()
            self._debug['timestamp']['end'] = self._io.pos()

        self._debug['len_key']['start'] = self._io.pos()
        self.len_key = self._io.read_s4be()
        self._debug['len_key']['end'] = self._io.pos()
        if self.len_key >= 0:
            pass
            self._debug['key']['start'] = self._io.pos()
            self.key = self._io.read_bytes(self.len_key)
            self._debug['key']['end'] = self._io.pos()

        self._debug['len_value']['start'] = self._io.pos()
        self.len_value = self._io.read_s4be()
        self._debug['len_value']['end'] = self._io.pos()
        if self.len_value >= 0:
            pass
            self._debug['value']['start'] = self._io.pos()
            self.value = self._io.read_bytes(self.len_value)
            self._debug['value']['end'] = self._io.pos()



    def _fetch_instances(self):
        pass
        self.attributes._fetch_instances()
        if self.magic == 1:
            pass

        if self.len_key >= 0:
            pass

        if self.len_value >= 0:
            pass


    class Attributes(KaitaiStruct):
        """The int8 attributes of a legacy message, most significant bit first."""
        SEQ_FIELDS = ["reserved", "timestamp_type", "compression"]
        def __init__(self, _io, _parent=None, _root=None):
            super(LegacyMessage.Attributes, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['reserved']['start'] = self._io.pos()
            self.reserved = self._io.read_bits_int_be(4)
            self._debug['reserved']['end'] = self._io.pos()
            self._debug['timestamp_type']['start'] = self._io.pos()
            self.timestamp_type = self._io.read_bits_int_be(1) != 0
            self._debug['timestamp_type']['end'] = self._io.pos()
            self._debug['compression']['start'] = self._io.pos()
            self.compression = KaitaiStream.resolve_enum(kafka_enums.KafkaEnums.CompressionCodec, self._io.read_bits_int_be(3))
            self._debug['compression']['end'] = self._io.pos()


        def _fetch_instances(self):
            pass


    @property
    def record_version(self):
        """The message format version (magic) by name; magic is 0 or 1 here."""
        if hasattr(self, '_m_record_version'):
            return self._m_record_version

        self._m_record_version = (kafka_enums.KafkaEnums.RecordVersion.v0 if self.magic == 0 else kafka_enums.KafkaEnums.RecordVersion.v1)
        return getattr(self, '_m_record_version', None)

    @property
    def timestamp_type(self):
        """The message's timestamp type as Kafka reads it (LegacyRecord.timestampType):
        no_timestamp_type (-1) for magic 0, else create_time or log_append_time by bit 3
        of the attributes. (A compressed v1 wrapper with log_append_time imposes its own
        timestamp on its inner messages.) The enum is written out as a conditional because
        compiler 0.11 does not find an imported enum from a value instance's `enum` key.
        """
        if hasattr(self, '_m_timestamp_type'):
            return self._m_timestamp_type

        self._m_timestamp_type = (kafka_enums.KafkaEnums.TimestampType.no_timestamp_type if self.magic == 0 else (kafka_enums.KafkaEnums.TimestampType.log_append_time if self.attributes.timestamp_type else kafka_enums.KafkaEnums.TimestampType.create_time))
        return getattr(self, '_m_timestamp_type', None)


