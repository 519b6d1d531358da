# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/record_batch.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import kafka_enums
from . import control_record_key
from . import record_list
from . import end_txn_marker
from enum import IntEnum
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RecordBatch(KaitaiStruct):
    """A whole v2 record batch as it lies in a log segment or a fetch response, from its
    base_offset (Kafka 0.11+). batch_length counts the bytes after itself, from
    partition_leader_epoch to the end, so the batch occupies 12 + batch_length bytes and the
    records take batch_length - 49 of them.
    
    The CRC (CRC-32C, Castagnoli) covers the bytes from attributes to the end of the batch;
    this spec does not check it (the runtime does). Uncompressed records are typed in place
    (`records`); compressed ones are raw bytes (`compressed_records`) for the runtime to
    decompress and parse with record_list.ksy. A control batch (is_control) holds control
    records whose key and value control_record_key.ksy and end_txn_marker.ksy describe.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#recordbatch
    
    
    .. seealso::
       DefaultRecordBatch - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java
    """

    class BatchKind(IntEnum):
        data = 0
        transactional = 1
        control = 2
        transactional_control = 3
    SEQ_FIELDS = ["base_offset", "batch_length", "partition_leader_epoch", "magic", "crc", "attributes", "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch", "base_sequence", "records_count", "records", "compressed_records"]
    def __init__(self, _io, _parent=None, _root=None):
        super(RecordBatch, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['base_offset']['start'] = self._io.pos()
        self.base_offset = self._io.read_s8be()
        self._debug['base_offset']['end'] = self._io.pos()
        self._debug['batch_length']['start'] = self._io.pos()
        self.batch_length = self._io.read_s4be()
        self._debug['batch_length']['end'] = self._io.pos()
        self._debug['partition_leader_epoch']['start'] = self._io.pos()
        self.partition_leader_epoch = self._io.read_s4be()
        self._debug['partition_leader_epoch']['end'] = self._io.pos()
        self._debug['magic']['start'] = self._io.pos()
        self.magic = self._io.read_s1()
        self._debug['magic']['end'] = self._io.pos()
        if not self.magic == 2:
            raise kaitaistruct.ValidationNotEqualError(2, self.magic, self._io, u"/seq/3")
        self._debug['crc']['start'] = self._io.pos()
        self.crc = self._io.read_u4be()
        self._debug['crc']['end'] = self._io.pos()
        self._debug['attributes']['start'] = self._io.pos()
        self.attributes = RecordBatch.Attributes(self._io, self, self._root)
        self.attributes._read()
        self._debug['attributes']['end'] = self._io.pos()
        self._debug['last_offset_delta']['start'] = self._io.pos()
        self.last_offset_delta = self._io.read_s4be()
        self._debug['last_offset_delta']['end'] = self._io.pos()
        self._debug['base_timestamp']['start'] = self._io.pos()
        self.base_timestamp = self._io.read_s8be()
        self._debug['base_timestamp']['end'] = self._io.pos()
        self._debug['max_timestamp']['start'] = self._io.pos()
        self.max_timestamp = self._io.read_s8be()
        self._debug['max_timestamp']['end'] = self._io.pos()
        self._debug['producer_id']['start'] = self._io.pos()
        self.producer_id = self._io.read_s8be()
        self._debug['producer_id']['end'] = self._io.pos()
        self._debug['producer_epoch']['start'] = self._io.pos()
        self.producer_epoch = self._io.read_s2be()
        self._debug['producer_epoch']['end'] = self._io.pos()
        self._debug['base_sequence']['start'] = self._io.pos()
        self.base_sequence = self._io.read_s4be()
        self._debug['base_sequence']['end'] = self._io.pos()
        self._debug['records_count']['start'] = self._io.pos()
        self.records_count = self._io.read_s4be()
        self._debug['records_count']['end'] = self._io.pos()
        if self.attributes.compression == kafka_enums.KafkaEnums.CompressionCodec.none:
            pass
            self._debug['records']['start'] = self._io.pos()
            self._raw_records = self._io.read_bytes(self.batch_length - 49)
            _io__raw_records = KaitaiStream(BytesIO(self._raw_records))
            self.records = record_list.RecordList(self.records_count, _io__raw_records)
            self.records._read()
            self._debug['records']['end'] = self._io.pos()

        if self.attributes.compression != kafka_enums.KafkaEnums.CompressionCodec.none:
            pass
            self._debug['compressed_records']['start'] = self._io.pos()
            self.compressed_records = self._io.read_bytes(self.batch_length - 49)
            self._debug['compressed_records']['end'] = self._io.pos()



    def _fetch_instances(self):
        pass
        self.attributes._fetch_instances()
        if self.attributes.compression == kafka_enums.KafkaEnums.CompressionCodec.none:
            pass
            self.records._fetch_instances()

        if self.attributes.compression != kafka_enums.KafkaEnums.CompressionCodec.none:
            pass

        _ = self.control_key
        if hasattr(self, '_m_control_key'):
            pass
            self._m_control_key._fetch_instances()

        _ = self.control_value
        if hasattr(self, '_m_control_value'):
            pass
            self._m_control_value._fetch_instances()


    class Attributes(KaitaiStruct):
        """The int16 attributes of a v2 batch, most significant bit first."""
        SEQ_FIELDS = ["reserved", "has_delete_horizon", "is_control", "is_transactional", "timestamp_type", "compression"]
        def __init__(self, _io, _parent=None, _root=None):
            super(RecordBatch.Attributes, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['reserved']['start'] = self._io.pos()
            self.reserved = self._io.read_bits_int_be(9)
            self._debug['reserved']['end'] = self._io.pos()
            self._debug['has_delete_horizon']['start'] = self._io.pos()
            self.has_delete_horizon = self._io.read_bits_int_be(1) != 0
            self._debug['has_delete_horizon']['end'] = self._io.pos()
            self._debug['is_control']['start'] = self._io.pos()
            self.is_control = self._io.read_bits_int_be(1) != 0
            self._debug['is_control']['end'] = self._io.pos()
            self._debug['is_transactional']['start'] = self._io.pos()
            self.is_transactional = self._io.read_bits_int_be(1) != 0
            self._debug['is_transactional']['end'] = self._io.pos()
            self._debug['timestamp_type']['start'] = self._io.pos()
            self.timestamp_type = KaitaiStream.resolve_enum(kafka_enums.KafkaEnums.TimestampType, self._io.read_bits_int_be(1))
            self._debug['timestamp_type']['end'] = self._io.pos()
            self._debug['compression']['start'] = self._io.pos()
            self.compression = KaitaiStream.resolve_enum(kafka_enums.KafkaEnums.CompressionCodec, self._io.read_bits_int_be(3))
            self._debug['compression']['end'] = self._io.pos()


        def _fetch_instances(self):
            pass


    @property
    def batch_kind(self):
        """What the batch holds, from the is_control and is_transactional bits: plain data, a
        transaction's data, or control records (a transaction marker is a transactional
        control batch; KRaft's control records are not transactional).
        """
        if hasattr(self, '_m_batch_kind'):
            return self._m_batch_kind

        self._m_batch_kind = KaitaiStream.resolve_enum(RecordBatch.BatchKind, (2 if self.attributes.is_control else 0) + (1 if self.attributes.is_transactional else 0))
        return getattr(self, '_m_batch_kind', None)

    @property
    def control_key(self):
        """The key of the first record of an uncompressed control batch, typed: its control type
        (commit, abort, or a KRaft type) by name. Kafka writes one control record per batch.
        """
        if hasattr(self, '_m_control_key'):
            return self._m_control_key

        if  ((self.attributes.is_control) and (self.attributes.compression == kafka_enums.KafkaEnums.CompressionCodec.none) and (self.records_count > 0) and (self.records.records[0].body.len_key.value >= 4)) :
            pass
            io = self.records.records[0].body._io
            _pos = io.pos()
            io.seek(((1 + len(self.records.records[0].body.timestamp_delta.groups)) + len(self.records.records[0].body.offset_delta.groups)) + len(self.records.records[0].body.len_key.groups))
            self._debug['_m_control_key']['start'] = io.pos()
            self._m_control_key = control_record_key.ControlRecordKey(io)
            self._m_control_key._read()
            self._debug['_m_control_key']['end'] = io.pos()
            io.seek(_pos)

        return getattr(self, '_m_control_key', None)

    @property
    def control_value(self):
        """The value of that first control record, typed, when it is a transaction marker (abort
        or commit): the coordinator epoch.
        """
        if hasattr(self, '_m_control_value'):
            return self._m_control_value

        if  ((self.attributes.is_control) and (self.attributes.compression == kafka_enums.KafkaEnums.CompressionCodec.none) and (self.records_count > 0) and (self.records.records[0].body.len_key.value >= 4) and (self.records.records[0].body.len_value.value >= 6) and ( ((self.control_key.type == control_record_key.ControlRecordKey.ControlRecordType.abort) or (self.control_key.type == control_record_key.ControlRecordKey.ControlRecordType.commit)) )) :
            pass
            io = self.records.records[0].body._io
            _pos = io.pos()
            io.seek(((((1 + len(self.records.records[0].body.timestamp_delta.groups)) + len(self.records.records[0].body.offset_delta.groups)) + len(self.records.records[0].body.len_key.groups)) + self.records.records[0].body.len_key.value) + len(self.records.records[0].body.len_value.groups))
            self._debug['_m_control_value']['start'] = io.pos()
            self._m_control_value = end_txn_marker.EndTxnMarker(io)
            self._m_control_value._read()
            self._debug['_m_control_value']['end'] = io.pos()
            io.seek(_pos)

        return getattr(self, '_m_control_value', None)

    @property
    def last_offset(self):
        """Offset of the last record of the batch (Kafka's lastOffset)."""
        if hasattr(self, '_m_last_offset'):
            return self._m_last_offset

        self._m_last_offset = self.base_offset + self.last_offset_delta
        return getattr(self, '_m_last_offset', None)

    @property
    def record_version(self):
        """The format version (magic) by name; always v2 here."""
        if hasattr(self, '_m_record_version'):
            return self._m_record_version

        self._m_record_version = kafka_enums.KafkaEnums.RecordVersion.v2
        return getattr(self, '_m_record_version', None)

    @property
    def timestamp_type(self):
        """The batch's timestamp type (bit 3 of the attributes): create_time or log_append_time;
        a v2 batch always has one. Named as in legacy_message, so that every entry of a
        record set answers `body.timestamp_type`.
        """
        if hasattr(self, '_m_timestamp_type'):
            return self._m_timestamp_type

        self._m_timestamp_type = self.attributes.timestamp_type
        return getattr(self, '_m_timestamp_type', None)


