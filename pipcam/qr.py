"""The scoreboard's address for phones at the table, as text and as a QR code.

Phones get the plain IPv4 address, not ``<hostname>.local``: older Android phones cannot resolve
mDNS names (PI.md), and a QR code of an address every phone can open is the whole point.
"""

from __future__ import annotations

import io
import ipaddress
import socket
import struct
import sys

import segno

__all__ = ["lan_address", "listen_host", "qr_png", "qr_svg", "qr_text", "scoreboard_url"]

LOOPBACK = "127.0.0.1"
# Interfaces of containers and VMs on the Pi itself; a phone on the LAN cannot reach them.
_VIRTUAL_PREFIXES = ("docker", "veth", "br-", "virbr", "lxc", "cni", "flannel", "podman", "tun")
# Never contacted: connecting a UDP socket only asks the kernel which source address it would
# route from, and sends no packet. A private address keeps even that question inside the LAN.
_ROUTE_PROBE = ("10.255.255.255", 9)
_SIOCGIFADDR = 0x8915  # Linux ioctl: an interface's IPv4 address


def _usable(address: str) -> bool:
    """True for an IPv4 address a phone could reach (not loopback, link-local or unspecified)."""
    try:
        ip = ipaddress.IPv4Address(address)
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast)


def _hostname_addresses() -> list[str]:
    """IPv4 addresses the host name resolves to (Raspberry Pi OS maps it to 127.0.1.1 only)."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return []
    return [str(info[4][0]) for info in infos]


def _interface_addresses() -> list[str]:
    """The IPv4 address of each network interface that has one (Linux only, else empty)."""
    if not sys.platform.startswith("linux"):
        return []
    import fcntl  # POSIX only; imported here so the module still imports on Windows

    addresses = []
    try:
        interfaces = socket.if_nameindex()
    except OSError:
        return []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in interfaces:
            if name.startswith(_VIRTUAL_PREFIXES):
                continue
            request = struct.pack("256s", name.encode()[:15])
            try:
                reply = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)
            except OSError:
                continue  # down, or no IPv4 address
            addresses.append(socket.inet_ntoa(reply[20:24]))
    return addresses


def _route_address() -> str | None:
    """The source address the kernel would use towards the LAN's default route, if any."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(_ROUTE_PROBE)
            return str(probe.getsockname()[0])
    except OSError:
        return None  # no route: no network at all


def lan_address() -> str:
    """The IPv4 address phones on the LAN should use to reach this machine; 127.0.0.1 if none.

    Addresses come from the host name and the network interfaces; when there are several, the
    one the default route leaves from wins (the network phones most likely share).
    """
    candidates = list(dict.fromkeys(a for a in _hostname_addresses() + _interface_addresses()))
    candidates = [a for a in candidates if _usable(a)]
    if len(candidates) == 1:
        return candidates[0]
    routed = _route_address()
    if routed is not None and _usable(routed) and (routed in candidates or not candidates):
        return routed
    private = [a for a in candidates if ipaddress.IPv4Address(a).is_private]
    return (private or candidates or [LOOPBACK])[0]


def listen_host(host: str | None) -> str | None:
    """The host of the scoreboard's URL when it listens on ``host`` (``table.host``): that
    address itself, or None (the LAN address) when it listens on every address.

    >>> listen_host("127.0.0.1"), listen_host("0.0.0.0"), listen_host("::")
    ('127.0.0.1', None, None)
    """
    if host is None or not host.strip():
        return None
    try:
        if ipaddress.ip_address(host.strip()).is_unspecified:
            return None
    except ValueError:
        pass  # a host name: phones use it as given
    return host.strip()


def scoreboard_url(port: int, host: str | None = None) -> str:
    """The scoreboard's URL on ``host`` (default: :func:`lan_address`) and ``port``.

    >>> scoreboard_url(8000, "192.168.1.20")
    'http://192.168.1.20:8000/'
    >>> scoreboard_url(80, "fe80::1")
    'http://[fe80::1]:80/'
    """
    if not 0 < port < 65536:
        raise ValueError(f"port must be 1-65535, not {port!r}")
    if host is None:
        host = lan_address()
    if ":" in host:  # IPv6 literals need brackets in a URL
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def _qr(url: str) -> segno.QRCode:
    """The QR code of ``url``: error level M at least, raised while the size stays the same."""
    return segno.make_qr(url, error="m", boost_error=True)


def qr_text(url: str) -> str:
    """``url`` as a QR code drawn in Unicode half blocks, two modules per character row.

    Blocks are the light modules, quiet zone included: on the usual light-on-dark console and
    journal the code reads dark-on-light, as scanners expect.
    """
    out = io.StringIO()
    _qr(url).terminal(out, compact=True)
    return out.getvalue()


def qr_svg(url: str) -> str:
    """``url`` as an inline ``<svg>`` element (no XML declaration) that CSS can size."""
    return str(_qr(url).svg_inline(scale=1, border=4, omitsize=True, title=url))


def qr_png(url: str, *, scale: int = 8) -> bytes:
    """``url`` as a PNG image, ``scale`` pixels per module."""
    out = io.BytesIO()
    _qr(url).save(out, kind="png", scale=scale, border=4)
    return out.getvalue()
