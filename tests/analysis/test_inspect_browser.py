"""The ``inspect --html`` page in headless Chromium: click a field, its bytes light up.

Chromium (Debian's ``chromium`` package) is driven over the Chrome DevTools Protocol on
``--remote-debugging-pipe`` (JSON messages separated by NUL on file descriptors 3 and 4), so no
websocket client, webdriver or other Python package is needed. Skipped when /usr/bin/chromium is
absent, except under CI=true, where that is a failure.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"

if not Path(CHROMIUM).exists():
    if os.environ.get("CI") == "true":
        pytest.fail(f"{CHROMIUM} not found (required when CI=true)", pytrace=False)
    pytest.skip(f"{CHROMIUM} not found", allow_module_level=True)


def _corpus() -> Path:
    if CORPUS.is_dir():
        return CORPUS
    if os.environ.get("CI") == "true":
        pytest.fail(f"corpus not found at {CORPUS} (required when CI=true)")
    pytest.skip(f"corpus not found at {CORPUS}")


class Chromium:
    """Just enough of a CDP client: commands, events, one page session."""

    def __init__(self, profile: Path) -> None:
        # The pipe protocol wants our ends on the child's fds 3 (commands) and 4 (replies).
        # Moved above 9 first, so that the two dup2 calls in the child cannot clobber each other.
        cmd_r, self._cmd_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        high_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        high_w = fcntl.fcntl(resp_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_r)
        os.close(resp_w)

        def _wire() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            [CHROMIUM, *flags],
            preexec_fn=_wire,
            pass_fds=(3, 4),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(high_r)
        os.close(high_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    def send(self, method: str, params: dict | None = None, *, timeout: float = 30) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session is not None and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._cmd_w, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_event(self, method: str, *, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._receive(deadline))

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._resp_r], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._resp_r, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def open_page(self, url: str, width: int = 1500, height: int = 1000) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (pressed + released) at the centre of the element."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close", timeout=10)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._resp_r)


@pytest.fixture
def browser(tmp_path: Path):
    chromium = Chromium(tmp_path / "profile")
    try:
        yield chromium
    finally:
        chromium.close()


def _write_page(source: Path, out: Path, *extra: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", "inspect", str(source), "--html",
         str(out), *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert out.is_file()


def _highlighted(browser: Chromium, pane: int) -> list[int]:
    return browser.evaluate(
        f"Array.from(document.querySelectorAll('#pane-{pane} .b.hl'), e => Number(e.dataset.i))"
    )


def test_clicking_a_field_highlights_exactly_its_bytes(browser: Chromium, tmp_path: Path) -> None:
    source = _corpus() / "rskafka" / "test_decode_fixture_gzip.bin"
    page = tmp_path / "inspect.html"
    _write_page(source, page)
    browser.open_page(page.as_uri())
    cells = browser.evaluate("document.querySelectorAll('#pane-0 .b').length")
    assert cells == source.stat().st_size

    # The stored CRC of a v2 batch is bytes 17..20 (DefaultRecordBatch.CRC_OFFSET).
    browser.click('#pane-0 .node[data-path="crc"]')
    assert _highlighted(browser, 0) == [17, 18, 19, 20]
    selection = browser.evaluate("document.getElementById('selection').textContent")
    stored = struct.unpack_from(">I", source.read_bytes(), 17)[0]
    assert f"0x{stored:08x}" in selection

    # Decompressed records have their own pane; the first record's key, found by our own
    # varint reading of the gzip output, is what the tree's key node selects.
    import gzip

    data = source.read_bytes()
    (length,) = struct.unpack_from(">i", data, 8)
    plain = gzip.decompress(data[61 : 12 + length])
    key_start, key_len = _first_record_key(plain)
    browser.click('#pane-1 .node[data-path="records[0].body.key"]')
    got = _highlighted(browser, 1)
    assert len(got) == key_len
    assert got == list(range(key_start, key_start + key_len))
    assert _highlighted(browser, 0) == []  # one selection at a time

    ARTIFACTS.mkdir(exist_ok=True)
    browser.click('#pane-0 .node[data-path="attributes"]')
    assert _highlighted(browser, 0) == [21, 22]
    browser.evaluate("window.scrollTo(0, 0)")
    shot = ARTIFACTS / "inspect.png"
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = raw = 0
    while True:
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos


def _first_record_key(records: bytes) -> tuple[int, int]:
    _, pos = _varint(records, 0)  # length
    pos += 1  # attributes
    _, pos = _varint(records, pos)  # timestamp delta
    _, pos = _varint(records, pos)  # offset delta
    key_len, pos = _varint(records, pos)
    return pos, key_len


def test_clicking_a_byte_selects_the_innermost_field(browser: Chromium, tmp_path: Path) -> None:
    source = _corpus() / "kafka-python" / "record_batch_data_v2.bin"
    page = tmp_path / "inspect.html"
    _write_page(source, page)
    browser.open_page(page.as_uri())
    # Byte 58 lies in records_count (bytes 57..60 of a v2 batch).
    browser.click('#pane-0 .b[data-i="58"]')
    assert _highlighted(browser, 0) == [57, 58, 59, 60]
    assert browser.evaluate("document.querySelector('.node.selected').dataset.path") == (
        "records_count"
    )


def test_record_contents_cannot_inject_markup(browser: Chromium, tmp_path: Path) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    evil = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    builder.append(0, timestamp=1700000000000, key=evil.encode(), value=b"<b>v</b>",
                   headers=[(evil, evil.encode())])  # fmt: skip
    source = tmp_path / "evil.log"
    source.write_bytes(bytes(builder.build()))
    page = tmp_path / "evil.html"
    _write_page(source, page)
    assert "<img" not in page.read_text()
    browser.open_page(page.as_uri())
    assert browser.evaluate("typeof window.pwned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('img, #panes script').length") == 0
    text = browser.evaluate(
        "document.querySelector('#pane-0 .node[data-path=\"records[0].body.key\"]').textContent"
    )
    assert "</script><script>window.pwned=1</script>" in text
    browser.click('#pane-0 .node[data-path="records[0].body.headers[0].key"]')
    assert len(_highlighted(browser, 0)) == len(evil.encode())
