from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import analyzer.ingest.readers as readers_package
from analyzer.errors import UsageError
from analyzer.ingest.readers.cloud_logging import CloudLoggingReader
from analyzer.ingest.readers.text import TextReader
from analyzer.ingest.registry import READERS, RECOGNIZED, choose_reader


def test_every_reader_class_is_registered() -> None:
    registered = {type(reader) for reader in READERS}
    found = set()
    for module_info in pkgutil.iter_modules(readers_package.__path__):
        module = importlib.import_module(f"analyzer.ingest.readers.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            # A reader is a class with a sniff() and a concrete name; protocols and base
            # classes have no name of their own.
            concrete = isinstance(getattr(cls, "name", None), str)
            if cls.__module__ == module.__name__ and hasattr(cls, "sniff") and concrete:
                found.add(cls)
    assert found == registered
    assert len({reader.name for reader in READERS}) == len(READERS)


def test_choice() -> None:
    entry = (
        b'{"insertId":"a","logName":"projects/p/logs/stderr","resource":{"type":"k8s_container"}}\n'
    )
    assert isinstance(choose_reader(entry, "x.json").reader, CloudLoggingReader)  # type: ignore[union-attr]
    absl = b"I1129 18:35:15.123456    1234 a.cc:1] hi\n" * 3
    choice = choose_reader(absl, "w.log")
    assert choice is not None and isinstance(choice.reader, TextReader) and choice.recognized
    odd = choose_reader(b"- 1117838570 2005.06.03 R02-M1-N0 RAS KERNEL INFO x\n", "bgl.log")
    assert odd is not None and isinstance(odd.reader, TextReader) and not odd.recognized
    assert odd.score < RECOGNIZED
    assert choose_reader(b"\x7fELF\x02\x01\x00\x00binary", "core") is None
    forced = choose_reader(b"anything", "f", forced="cloud_logging")
    assert forced is not None and isinstance(forced.reader, CloudLoggingReader)
    with pytest.raises(UsageError, match="unknown reader"):
        choose_reader(b"", "f", forced="nope")
