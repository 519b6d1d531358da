"""The kafka-format command."""
import argparse


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="kafka-format")
    p.parse_args(argv)
    return 0
