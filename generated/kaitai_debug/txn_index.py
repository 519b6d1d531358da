# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/txn_index.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class TxnIndex(KaitaiStruct):
    """The transaction index of a log segment (NNNNNNNNNNNNNNNNNNNN.txnindex): the aborted
    transactions whose abort marker lies in the segment, as 34-byte AbortedTxn entries, so
    that read_committed consumers can skip their records. No checksum.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#log
    
    
    .. seealso::
       AbortedTxn - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/AbortedTxn.java
    """
    SEQ_FIELDS = ["entries"]
    def __init__(self, _io, _parent=None, _root=None):
        super(TxnIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['entries']['start'] = self._io.pos()
        self._debug['entries']['arr'] = []
        self.entries = []
        i = 0
        while not self._io.is_eof():
            self._debug['entries']['arr'].append({'start': self._io.pos()})
            _t_entries = TxnIndex.AbortedTxn(self._io, self, self._root)
            try:
                _t_entries._read()
            finally:
                self.entries.append(_t_entries)
            self._debug['entries']['arr'][len(self.entries) - 1]['end'] = self._io.pos()
            i += 1

        self._debug['entries']['end'] = self._io.pos()


    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class AbortedTxn(KaitaiStruct):
        """One aborted transaction (34 bytes)."""
        SEQ_FIELDS = ["version", "producer_id", "first_offset", "last_offset", "last_stable_offset"]
        def __init__(self, _io, _parent=None, _root=None):
            super(TxnIndex.AbortedTxn, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['version']['start'] = self._io.pos()
            self.version = self._io.read_s2be()
            self._debug['version']['end'] = self._io.pos()
            self._debug['producer_id']['start'] = self._io.pos()
            self.producer_id = self._io.read_s8be()
            self._debug['producer_id']['end'] = self._io.pos()
            self._debug['first_offset']['start'] = self._io.pos()
            self.first_offset = self._io.read_s8be()
            self._debug['first_offset']['end'] = self._io.pos()
            self._debug['last_offset']['start'] = self._io.pos()
            self.last_offset = self._io.read_s8be()
            self._debug['last_offset']['end'] = self._io.pos()
            self._debug['last_stable_offset']['start'] = self._io.pos()
            self.last_stable_offset = self._io.read_s8be()
            self._debug['last_stable_offset']['end'] = self._io.pos()


        def _fetch_instances(self):
            pass



