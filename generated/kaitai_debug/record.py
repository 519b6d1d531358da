# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/record.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import varint
import collections


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
    SEQ_FIELDS = ["len_body", "body"]
    def __init__(self, _io, _parent=None, _root=None):
        super(Record, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['len_body']['start'] = self._io.pos()
        self.len_body = varint.Varint(self._io)
        self.len_body._read()
        self._debug['len_body']['end'] = self._io.pos()
        _ = self.len_body
        if not _.value >= 0:
            raise kaitaistruct.ValidationExprError(self.len_body, self._io, u"/seq/0")
        self._debug['body']['start'] = self._io.pos()
        self._raw_body = self._io.read_bytes(self.len_body.value)
        _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
        self.body = Record.Body(_io__raw_body, self, self._root)
        self.body._read()
        self._debug['body']['end'] = self._io.pos()


    def _fetch_instances(self):
        pass
        self.len_body._fetch_instances()
        self.body._fetch_instances()

    class Body(KaitaiStruct):
        """The fields of a record after its length."""
        SEQ_FIELDS = ["attributes", "timestamp_delta", "offset_delta", "len_key", "key", "len_value", "value", "num_headers", "headers"]
        def __init__(self, _io, _parent=None, _root=None):
            super(Record.Body, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['attributes']['start'] = self._io.pos()
            self.attributes = self._io.read_s1()
            self._debug['attributes']['end'] = self._io.pos()
            self._debug['timestamp_delta']['start'] = self._io.pos()
            self.timestamp_delta = varint.Varint(self._io)
            self.timestamp_delta._read()
            self._debug['timestamp_delta']['end'] = self._io.pos()
            self._debug['offset_delta']['start'] = self._io.pos()
            self.offset_delta = varint.Varint(self._io)
            self.offset_delta._read()
            self._debug['offset_delta']['end'] = self._io.pos()
            self._debug['len_key']['start'] = self._io.pos()
            self.len_key = varint.Varint(self._io)
            self.len_key._read()
            self._debug['len_key']['end'] = self._io.pos()
            if self.len_key.value >= 0:
                pass
                self._debug['key']['start'] = self._io.pos()
                self.key = self._io.read_bytes(self.len_key.value)
                self._debug['key']['end'] = self._io.pos()

            self._debug['len_value']['start'] = self._io.pos()
            self.len_value = varint.Varint(self._io)
            self.len_value._read()
            self._debug['len_value']['end'] = self._io.pos()
            if self.len_value.value >= 0:
                pass
                self._debug['value']['start'] = self._io.pos()
                self.value = self._io.read_bytes(self.len_value.value)
                self._debug['value']['end'] = self._io.pos()

            self._debug['num_headers']['start'] = self._io.pos()
            self.num_headers = varint.Varint(self._io)
            self.num_headers._read()
            self._debug['num_headers']['end'] = self._io.pos()
            _ = self.num_headers
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_headers, self._io, u"/types/body/seq/7")
            self._debug['headers']['start'] = self._io.pos()
            self._debug['headers']['arr'] = []
            self.headers = []
            for i in range(self.num_headers.value):
                self._debug['headers']['arr'].append({'start': self._io.pos()})
                _t_headers = Record.Header(self._io, self, self._root)
                try:
                    _t_headers._read()
                finally:
                    self.headers.append(_t_headers)
                self._debug['headers']['arr'][i]['end'] = self._io.pos()

            self._debug['headers']['end'] = self._io.pos()


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
        SEQ_FIELDS = ["len_key", "key", "len_value", "value"]
        def __init__(self, _io, _parent=None, _root=None):
            super(Record.Header, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['len_key']['start'] = self._io.pos()
            self.len_key = varint.Varint(self._io)
            self.len_key._read()
            self._debug['len_key']['end'] = self._io.pos()
            _ = self.len_key
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.len_key, self._io, u"/types/header/seq/0")
            self._debug['key']['start'] = self._io.pos()
            self.key = (self._io.read_bytes(self.len_key.value)).decode(u"UTF-8")
            self._debug['key']['end'] = self._io.pos()
            self._debug['len_value']['start'] = self._io.pos()
            self.len_value = varint.Varint(self._io)
            self.len_value._read()
            self._debug['len_value']['end'] = self._io.pos()
            if self.len_value.value >= 0:
                pass
                self._debug['value']['start'] = self._io.pos()
                self.value = self._io.read_bytes(self.len_value.value)
                self._debug['value']['end'] = self._io.pos()



        def _fetch_instances(self):
            pass
            self.len_key._fetch_instances()
            self.len_value._fetch_instances()
            if self.len_value.value >= 0:
                pass




