# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/record.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), parser build,
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import varint


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class Record(KaitaiStruct):
    """One record of a v2 record batch (magic 2, Kafka 0.11+): a varint length, then that many
    bytes holding the record's fields. Lengths and deltas are zigzag varints (see varint.ksy).
    The record's offset is the batch's base_offset + offset_delta; its timestamp is the
    batch's base_timestamp + timestamp_delta (under LogAppendTime the batch's max_timestamp
    applies instead). A negative key or value length means null (Kafka writes -1).
    
    The body is parsed in a substream of exactly `len_body` bytes, as Kafka bounds it; a
    reader that wants Kafka's strictness checks that the body substream is fully consumed.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#record
    
    
    .. seealso::
       DefaultRecord - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecord.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(Record, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.len_body = varint.Varint(self._io)
        _ = self.len_body
        if not _.value >= 0:
            raise kaitaistruct.ValidationExprError(self.len_body, self._io, u"/seq/0")
        self._raw_body = self._io.read_bytes(self.len_body.value)
        _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
        self.body = Record.Body(_io__raw_body, self, self._root)


    def _fetch_instances(self):
        pass
        self.len_body._fetch_instances()
        self.body._fetch_instances()

    class Body(KaitaiStruct):
        """The fields of a record after its length."""
        def __init__(self, _io, _parent=None, _root=None):
            super(Record.Body, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.attributes = self._io.read_s1()
            self.timestamp_delta = varint.Varint(self._io)
            self.offset_delta = varint.Varint(self._io)
            self.len_key = varint.Varint(self._io)
            if self.len_key.value >= 0:
                pass
                self.key = self._io.read_bytes(self.len_key.value)

            self.len_value = varint.Varint(self._io)
            if self.len_value.value >= 0:
                pass
                self.value = self._io.read_bytes(self.len_value.value)

            self.num_headers = varint.Varint(self._io)
            _ = self.num_headers
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_headers, self._io, u"/types/body/seq/7")
            self.headers = []
            for i in range(self.num_headers.value):
                self.headers.append(Record.Header(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.timestamp_delta._fetch_instances()
            self.offset_delta._fetch_instances()
            self.len_key._fetch_instances()
            if self.len_key.value >= 0:
                pass

            self.len_value._fetch_instances()
            if self.len_value.value >= 0:
                pass

            self.num_headers._fetch_instances()
            for i in range(len(self.headers)):
                pass
                self.headers[i]._fetch_instances()



    class Header(KaitaiStruct):
        """One record header; keys may repeat."""
        def __init__(self, _io, _parent=None, _root=None):
            super(Record.Header, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len_key = varint.Varint(self._io)
            _ = self.len_key
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.len_key, self._io, u"/types/header/seq/0")
            self.key = (self._io.read_bytes(self.len_key.value)).decode(u"UTF-8")
            self.len_value = varint.Varint(self._io)
            if self.len_value.value >= 0:
                pass
                self.value = self._io.read_bytes(self.len_value.value)



        def _fetch_instances(self):
            pass
            self.len_key._fetch_instances()
            self.len_value._fetch_instances()
            if self.len_value.value >= 0:
                pass




