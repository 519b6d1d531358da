# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/producer_snapshot.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import collections


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
    SEQ_FIELDS = ["version", "crc", "num_entries", "entries"]
    def __init__(self, _io, _parent=None, _root=None):
        super(ProducerSnapshot, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['version']['start'] = self._io.pos()
        self.version = self._io.read_s2be()
        self._debug['version']['end'] = self._io.pos()
        self._debug['crc']['start'] = self._io.pos()
        self.crc = self._io.read_u4be()
        self._debug['crc']['end'] = self._io.pos()
        self._debug['num_entries']['start'] = self._io.pos()
        self.num_entries = self._io.read_s4be()
        self._debug['num_entries']['end'] = self._io.pos()
        _ = self.num_entries
        if not _ >= 0:
            raise kaitaistruct.ValidationExprError(self.num_entries, self._io, u"/seq/2")
        self._debug['entries']['start'] = self._io.pos()
        self._debug['entries']['arr'] = []
        self.entries = []
        for i in range(self.num_entries):
            self._debug['entries']['arr'].append({'start': self._io.pos()})
            _t_entries = ProducerSnapshot.Entry(self._io, self, self._root)
            try:
                _t_entries._read()
            finally:
                self.entries.append(_t_entries)
            self._debug['entries']['arr'][i]['end'] = self._io.pos()

        self._debug['entries']['end'] = self._io.pos()


    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class Entry(KaitaiStruct):
        """The state of one producer (46 bytes)."""
        SEQ_FIELDS = ["producer_id", "epoch", "last_sequence", "last_offset", "offset_delta", "timestamp", "coordinator_epoch", "current_txn_first_offset"]
        def __init__(self, _io, _parent=None, _root=None):
            super(ProducerSnapshot.Entry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['producer_id']['start'] = self._io.pos()
            self.producer_id = self._io.read_s8be()
            self._debug['producer_id']['end'] = self._io.pos()
            self._debug['epoch']['start'] = self._io.pos()
            self.epoch = self._io.read_s2be()
            self._debug['epoch']['end'] = self._io.pos()
            self._debug['last_sequence']['start'] = self._io.pos()
            self.last_sequence = self._io.read_s4be()
            self._debug['last_sequence']['end'] = self._io.pos()
            self._debug['last_offset']['start'] = self._io.pos()
            self.last_offset = self._io.read_s8be()
            self._debug['last_offset']['end'] = self._io.pos()
            self._debug['offset_delta']['start'] = self._io.pos()
            self.offset_delta = self._io.read_s4be()
            self._debug['offset_delta']['end'] = self._io.pos()
            self._debug['timestamp']['start'] = self._io.pos()
            self.timestamp = self._io.read_s8be()
            self._debug['timestamp']['end'] = self._io.pos()
            self._debug['coordinator_epoch']['start'] = self._io.pos()
            self.coordinator_epoch = self._io.read_s4be()
            self._debug['coordinator_epoch']['end'] = self._io.pos()
            self._debug['current_txn_first_offset']['start'] = self._io.pos()
            self.current_txn_first_offset = self._io.read_s8be()
            self._debug['current_txn_first_offset']['end'] = self._io.pos()


        def _fetch_instances(self):
            pass



