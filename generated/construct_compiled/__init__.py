# GENERATED FILE: do not edit by hand.
# Construct 2.10.70 compiled parsers of the Construct schemas in schemas/, one module
# per schema (written by scripts/gen_construct.py):
#   varint
#   record
#   record_list
#   record_batch
#   legacy_message
#   record_set
#   control_record_key
#   end_txn_marker
#   offset_index
#   time_index
#   txn_index
#   producer_snapshot
"""Compiled Construct parsers; load them with kafka_format.schemas.compiled."""
