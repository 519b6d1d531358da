# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/record_list.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), parser build,
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import record


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RecordList(KaitaiStruct):
    """The records of one v2 record batch, back to back. For an uncompressed batch they are the
    batch's payload (record_batch.ksy types them in place); for a compressed batch they are
    what the payload decompresses to, so the runtime instantiates this type over the
    decompressed bytes, passing the batch's records_count as num_records, e.g. in Python
    `RecordList(records_count, KaitaiStream(BytesIO(data)))`.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#recordbatch
    
    
    .. seealso::
       DefaultRecordBatch - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java
    """
    def __init__(self, num_records, _io, _parent=None, _root=None):
        super(RecordList, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self.num_records = num_records
        self._read()

    def _read(self):
        self.records = []
        for i in range(self.num_records):
            self.records.append(record.Record(self._io))



    def _fetch_instances(self):
        pass
        for i in range(len(self.records)):
            pass
            self.records[i]._fetch_instances()



