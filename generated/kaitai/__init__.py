# GENERATED FILE - DO NOT EDIT BY HAND.
# Package of the kaitai-struct-compiler 0.11.0 Python output for
# schemas/*.ksy, written by scripts/gen_kaitai.py (`make generate`). Modules:
#   control_record_key.py
#   end_txn_marker.py
#   kafka_enums.py
#   legacy_message.py
#   offset_index.py
#   producer_snapshot.py
#   record.py
#   record_batch.py
#   record_list.py
#   record_set.py
#   time_index.py
#   txn_index.py
#   varint.py
"""Kaitai Struct parsers generated from schemas/*.ksy."""
