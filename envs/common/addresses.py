"""Whether a host name or address is this machine's own (loopback): shared by the play server, which binds and
trusts loopback names, and the language-model seats, which warn before sending a key anywhere else in the clear."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ``::1``; IPv6 with or without brackets)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
