"""`network.mode`: where the daemon may listen, checked before it binds.

`localhost` (default) allows loopback only; `tailscale` this machine's Tailscale address (or
loopback behind `tailscale serve`); `lan` any address. Any mode but `localhost` needs `auth.mode`
team or hybrid. A specific non-loopback bind address is accepted by the Host guard without an
`allowed_hosts` entry (docs/security.md, "Network modes").
"""

from __future__ import annotations

import ipaddress

from signet.config import Config
from signet.daemon.tokens import is_loopback
from signet.errors import ConfigError

__all__ = ["check_network_mode", "own_hosts"]

TAILNET = (ipaddress.ip_network("100.64.0.0/10"), ipaddress.ip_network("fd7a:115c:a1e0::/48"))
ANY = ("0.0.0.0", "::", "")


def check_network_mode(config: Config) -> None:
    """ConfigError naming the keys when `bind` does not fit `network.mode` and `auth.mode`."""
    mode, bind = config.network.mode, config.bind
    if mode == "localhost":
        if not is_loopback(bind):
            raise ConfigError(
                f"refusing to listen on {bind}: network.mode is localhost (loopback only); set"
                " network.mode to lan (or tailscale, for a Tailscale address) and auth.mode to"
                " team or hybrid to serve other machines"
            )
        return
    if config.auth.mode not in ("team", "hybrid"):
        raise ConfigError(
            f"network.mode {mode} serves other machines and needs auth.mode team or hybrid"
            f" (auth.mode is {config.auth.mode})"
        )
    if mode == "tailscale" and not (is_loopback(bind) or _in_tailnet(bind)):
        raise ConfigError(
            f"refusing to listen on {bind}: network.mode tailscale binds this machine's Tailscale"
            " address (100.64.0.0/10 or fd7a:115c:a1e0::/48; see `tailscale ip`) or loopback"
            " behind `tailscale serve`; use network.mode lan to listen on other networks"
        )


def own_hosts(config: Config) -> tuple[str, ...]:
    """Host header names the daemon answers to besides loopback: `network.allowed_hosts`, plus
    the specific non-loopback address it binds in a network mode."""
    hosts = tuple(config.network.allowed_hosts)
    bind = config.bind.strip()
    if config.network.mode == "localhost" or bind in ANY or is_loopback(bind):
        return hosts
    named = f"[{bind.strip('[]')}]" if ":" in bind else bind
    return (*hosts, f"{named}:{config.port}")


def _in_tailnet(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return any(address in net for net in TAILNET)
