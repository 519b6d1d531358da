# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/txn_index.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), parser build,
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


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
    def __init__(self, _io, _parent=None, _root=None):
        super(TxnIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.entries = []
        i = 0
        while not self._io.is_eof():
            self.entries.append(TxnIndex.AbortedTxn(self._io, self, self._root))
            i += 1



    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class AbortedTxn(KaitaiStruct):
        """One aborted transaction (34 bytes)."""
        def __init__(self, _io, _parent=None, _root=None):
            super(TxnIndex.AbortedTxn, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.version = self._io.read_s2be()
            self.producer_id = self._io.read_s8be()
            self.first_offset = self._io.read_s8be()
            self.last_offset = self._io.read_s8be()
            self.last_stable_offset = self._io.read_s8be()


        def _fetch_instances(self):
            pass



