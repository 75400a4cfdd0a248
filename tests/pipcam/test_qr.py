"""The scoreboard URL and its QR codes, decoded back with OpenCV's QR reader."""

from __future__ import annotations

import ipaddress
import re
import socket
import sys

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from pipcam import qr
from pipcam.qr import lan_address, listen_host, qr_png, qr_svg, qr_text, scoreboard_url

Bitmap = npt.NDArray[np.uint8]  # 1 = dark module

URLS = [
    pytest.param("http://192.168.1.20:8000/", id="typical"),
    pytest.param("http://10.0.0.5:80/", id="short"),
    pytest.param("http://172.31.255.254:65535/", id="longest-ipv4"),
]


def decode(bitmap: Bitmap) -> str:
    """Read a QR code from a module bitmap the way a phone would: from pixels."""
    pixels = np.where(bitmap == 1, 0, 255).astype(np.uint8)
    image = cv2.resize(pixels, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    text, points, _ = cv2.QRCodeDetector().detectAndDecode(image)
    assert points is not None, "no QR code found"
    return str(text)


def text_bitmap(drawn: str) -> Bitmap:
    """The modules of :func:`qr_text` output: each character is a top and a bottom module."""
    # Blocks are light modules (the code is drawn for a light-on-dark terminal).
    halves = {" ": (1, 1), "\u2580": (0, 1), "\u2584": (1, 0), "\u2588": (0, 0)}
    rows = drawn.splitlines()
    bitmap = np.zeros((2 * len(rows), len(rows[0])), dtype=np.uint8)
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            bitmap[2 * y, x], bitmap[2 * y + 1, x] = halves[char]
    return bitmap


def svg_bitmap(svg: str) -> Bitmap:
    """Rasterise segno's one-path SVG: 1-unit strokes drawn with M, m and h commands."""
    view = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
    path = re.search(r' d="([^"]+)"', svg)
    assert view is not None
    assert path is not None
    bitmap = np.zeros((int(view[2]), int(view[1])), dtype=np.uint8)
    x = y = 0.0
    for command, args in re.findall(r"([Mmh])([-\d. ]+)", path[1]):
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", args)]
        if command == "M":
            x, y = numbers
        elif command == "m":
            x, y = x + numbers[0], y + numbers[1]
        else:
            bitmap[int(y), int(x) : int(x + numbers[0])] = 1
            x += numbers[0]
    return bitmap


@pytest.mark.parametrize("url", URLS)
def test_terminal_qr_decodes_to_the_url(url: str) -> None:
    assert decode(text_bitmap(qr_text(url))) == url


@pytest.mark.parametrize("url", URLS)
def test_svg_qr_decodes_to_the_url(url: str) -> None:
    assert decode(svg_bitmap(qr_svg(url))) == url


@pytest.mark.parametrize("url", URLS)
def test_png_qr_decodes_to_the_url(url: str) -> None:
    png = np.frombuffer(qr_png(url), dtype=np.uint8)
    image = cv2.imdecode(png, cv2.IMREAD_GRAYSCALE)
    assert image is not None
    text, _, _ = cv2.QRCodeDetector().detectAndDecode(image)
    assert text == url


@pytest.mark.parametrize("url", URLS)
def test_terminal_qr_is_square_with_a_quiet_zone(url: str) -> None:
    code = qr._qr(url)
    assert code.error in {"M", "Q", "H"}
    modules = 17 + 4 * int(code.version) + 2 * 4  # symbol plus a 4-module quiet zone each side
    rows = qr_text(url).splitlines()
    assert {len(row) for row in rows} == {modules}
    assert len(rows) == (modules + 1) // 2  # two modules per character row
    bitmap = text_bitmap(qr_text(url))[:modules]
    assert bitmap.shape == (modules, modules)
    assert not bitmap[:4].any()
    assert not bitmap[-4:].any()
    assert not bitmap[:, :4].any()
    assert not bitmap[:, -4:].any()
    assert bitmap[4:11, 4].all(), "the finder pattern's left edge is dark"


def test_svg_embeds_without_declaration_and_scales_with_css() -> None:
    svg = qr_svg("http://192.168.1.20:8000/")
    assert svg.startswith("<svg ")
    assert "<?xml" not in svg
    assert 'width="' not in svg.split(">", 1)[0]
    assert "<title>http://192.168.1.20:8000/</title>" in svg


def test_png_scale_sets_the_pixel_size() -> None:
    url = "http://192.168.1.20:8000/"
    modules = 17 + 4 * int(qr._qr(url).version) + 8
    for scale in (2, 5):
        image = cv2.imdecode(np.frombuffer(qr_png(url, scale=scale), np.uint8), 0)
        assert image is not None
        assert image.shape == (modules * scale, modules * scale)


# --- the URL -------------------------------------------------------------------------------------


def test_scoreboard_url_on_this_machine_is_ipv4_with_the_port() -> None:
    url = scoreboard_url(8123)
    found = re.fullmatch(r"http://([\d.]+):8123/", url)
    assert found is not None, url
    address = ipaddress.IPv4Address(found[1])
    assert not address.is_link_local
    assert not address.is_unspecified


@pytest.mark.parametrize(
    ("host", "port", "url"),
    [
        pytest.param("192.168.1.20", 8000, "http://192.168.1.20:8000/", id="ipv4"),
        pytest.param("pipcam.local", 80, "http://pipcam.local:80/", id="name"),
        pytest.param("fd00::2", 8000, "http://[fd00::2]:8000/", id="ipv6"),
    ],
)
def test_scoreboard_url_for_a_given_host(host: str, port: int, url: str) -> None:
    assert scoreboard_url(port, host) == url


@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("192.168.1.20", "192.168.1.20"),
        ("pipcam.local", "pipcam.local"),
        ("0.0.0.0", None),
        ("::", None),
        ("", None),
    ],
)
def test_the_url_names_the_configured_host_unless_it_is_every_address(
    host: str, shown: str | None
) -> None:
    assert listen_host(host) == shown


@pytest.mark.parametrize("port", [0, -1, 65536])
def test_scoreboard_url_refuses_bad_ports(port: int) -> None:
    with pytest.raises(ValueError, match=rf"^port must be 1-65535, not {port}$"):
        scoreboard_url(port, "192.168.1.20")


@pytest.mark.parametrize(
    ("hostname", "interfaces", "routed", "expected"),
    [
        pytest.param(
            ["127.0.1.1"],
            ["127.0.0.1", "192.168.1.20"],
            None,
            "192.168.1.20",
            id="pi-os-hosts-file-maps-the-name-to-loopback",
        ),
        pytest.param(
            ["192.168.1.20"],
            ["127.0.0.1", "192.168.1.20"],
            "10.9.9.9",
            "192.168.1.20",
            id="single-candidate-needs-no-route",
        ),
        pytest.param(
            [],
            ["192.168.1.20", "10.0.0.7"],
            "10.0.0.7",
            "10.0.0.7",
            id="default-route-picks-among-several",
        ),
        pytest.param(
            [],
            ["81.2.69.160", "192.168.4.1"],
            None,
            "192.168.4.1",
            id="no-route-prefers-a-private-address",
        ),
        pytest.param(
            [],
            ["169.254.3.3", "127.0.0.1"],
            "192.168.1.20",
            "192.168.1.20",
            id="route-when-no-interface-address-is-usable",
        ),
        pytest.param([], ["169.254.3.3"], None, "127.0.0.1", id="nothing-usable"),
        pytest.param([], [], "0.0.0.0", "127.0.0.1", id="unspecified-route"),
    ],
)
def test_lan_address_choice(
    monkeypatch: pytest.MonkeyPatch,
    hostname: list[str],
    interfaces: list[str],
    routed: str | None,
    expected: str,
) -> None:
    monkeypatch.setattr(qr, "_hostname_addresses", lambda: hostname)
    monkeypatch.setattr(qr, "_interface_addresses", lambda: interfaces)
    monkeypatch.setattr(qr, "_route_address", lambda: routed)
    assert lan_address() == expected


def test_lan_address_needs_no_route_when_one_address_is_usable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_probe() -> str | None:
        raise AssertionError("the route probe is not needed with a single candidate")

    monkeypatch.setattr(qr, "_hostname_addresses", lambda: ["127.0.1.1"])
    monkeypatch.setattr(qr, "_interface_addresses", lambda: ["127.0.0.1", "192.168.1.20"])
    monkeypatch.setattr(qr, "_route_address", no_probe)
    assert lan_address() == "192.168.1.20"


def test_hostname_lookup_failure_gives_no_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object) -> list[object]:
        raise socket.gaierror("no such host")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    assert qr._hostname_addresses() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="interface ioctl is Linux only")
def test_interface_addresses_include_loopback() -> None:
    addresses = qr._interface_addresses()
    assert "127.0.0.1" in addresses
    for address in addresses:
        ipaddress.IPv4Address(address)


def test_route_probe_sends_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[object] = []

    class RecordingSocket(socket.socket):
        def send(self, *args: object, **kwargs: object) -> int:
            sent.append(args)
            return 0

        def sendto(self, *args: object, **kwargs: object) -> int:
            sent.append(args)
            return 0

    monkeypatch.setattr(socket, "socket", RecordingSocket)
    routed = qr._route_address()
    assert routed is None or ipaddress.IPv4Address(routed)
    assert sent == []
