# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/producer_snapshot.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), parser build,
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class ProducerSnapshot(KaitaiStruct):
    """A producer-state snapshot of a partition (NNNNNNNNNNNNNNNNNNNN.snapshot, named after the
    offset it was taken at): the state of every idempotent or transactional producer, so that
    a broker need not replay the log to rebuild it. The CRC is a CRC-32C over every byte after
    the crc field (from num_entries to the end of the file); this spec does not check it.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#log
    
    
    .. seealso::
       ProducerStateManager (PID_SNAPSHOT_MAP_SCHEMA) - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(ProducerSnapshot, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.version = self._io.read_s2be()
        self.crc = self._io.read_u4be()
        self.num_entries = self._io.read_s4be()
        _ = self.num_entries
        if not _ >= 0:
            raise kaitaistruct.ValidationExprError(self.num_entries, self._io, u"/seq/2")
        self.entries = []
        for i in range(self.num_entries):
            self.entries.append(ProducerSnapshot.Entry(self._io, self, self._root))



    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class Entry(KaitaiStruct):
        """The state of one producer (46 bytes)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(ProducerSnapshot.Entry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.producer_id = self._io.read_s8be()
            self.epoch = self._io.read_s2be()
            self.last_sequence = self._io.read_s4be()
            self.last_offset = self._io.read_s8be()
            self.offset_delta = self._io.read_s4be()
            self.timestamp = self._io.read_s8be()
            self.coordinator_epoch = self._io.read_s4be()
            self.current_txn_first_offset = self._io.read_s8be()


        def _fetch_instances(self):
            pass



