# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/kafka_enums.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), parser build,
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class KafkaEnums(KaitaiStruct):
    """Enumerations used by more than one Kafka record format (legacy messages v0/v1 and v2
    record batches). This spec reads nothing; the other specs import it for its enums.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#messageformat
    
    
    .. seealso::
       CompressionType - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/CompressionType.java
    
    
    .. seealso::
       TimestampType - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/TimestampType.java
    
    
    .. seealso::
       RecordVersion - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/RecordVersion.java
    """

    class CompressionCodec(IntEnum):
        none = 0
        gzip = 1
        snappy = 2
        lz4 = 3
        zstd = 4

    class RecordVersion(IntEnum):
        v0 = 0
        v1 = 1
        v2 = 2

    class TimestampType(IntEnum):
        no_timestamp_type = -1
        create_time = 0
        log_append_time = 1
    def __init__(self, _io, _parent=None, _root=None):
        super(KafkaEnums, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        pass


    def _fetch_instances(self):
        pass


