"""API tokens: issue, verify, revoke, and the per-install admin token (docs/security.md).

A token `sgt1.<payload>.<signature>` is HMAC-SHA256 signed under `.secrets/auth.key`; it is accepted
when the signature matches, it has not expired and its unrevoked row in `tokens` has the same hash.
The row, not the payload, supplies role, permissions and scope. Login codes are stored hashed,
expire in five minutes and are spent once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import os
import secrets
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from signet.clock import Clock, SystemClock, stamp
from signet.config import Config
from signet.errors import ConfigError, InvalidInput, NotFound, Unauthorized
from signet.store.backend import CoreStore, SqliteCore
from signet.store.db import Store
from signet.store.signing_key import file_key, workspace_key_path
from signet.store.tokens import LOGIN_ROLE, TokenRow
from signet.types import format_ts, parse_ts

__all__ = [
    "PERMISSIONS", "ROLES", "IssuedToken", "auth_headers", "Principal", "TokenAuthority", "ensure_install_token",
    "load_secret", "refuse_open_bind", "secret_path",
]

PERMISSIONS: tuple[str, ...] = (
    "remember", "recall", "modify", "forget", "recover", "admin", "documents", "connectors",
    "diagnostics", "analytics",
)
ROLES: dict[str, frozenset[str]] = {
    "admin": frozenset(PERMISSIONS),
    "operator": frozenset(PERMISSIONS) - {"admin"},
    "agent": frozenset({"remember", "recall", "modify", "forget", "recover", "documents"}),
    "readonly": frozenset({"recall", "diagnostics"}),
}
PREFIX = "sgt1"
MAX_TOKEN_CHARS = 4096
LOGIN_CODE_TTL = timedelta(minutes=5)
DASHBOARD_TOKEN_TTL = timedelta(days=1)
INSTALL_TOKEN_NAME = "install-admin"
# The install token is renewed at daemon start when it has less than this left.
RENEW_BEFORE = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling, as the verified token says: what they may do and which slice they see."""

    token_id: str
    name: str
    role: str
    permissions: frozenset[str]
    scope_project: str | None = None
    scope_agent: str | None = None

    def allows(self, permission: str) -> bool:
        return permission in self.permissions

    @property
    def scoped(self) -> bool:
        return self.scope_project is not None or self.scope_agent is not None


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A freshly issued token: `token` is shown once and stored nowhere but where it is given."""

    token: str
    row: TokenRow


def secret_path(workspace: Path) -> Path:
    return workspace_key_path(workspace)


def load_secret(workspace: Path) -> bytes:
    """The per-install signing secret, created (0600, in a 0700 directory) when missing."""
    return file_key(secret_path(workspace))


class TokenAuthority:
    """Issues and checks tokens for one workspace's store and secret; `for_core` takes any
    CoreStore, whose signing key every process opening it shares (every daemon on a PostgreSQL
    database)."""

    def __init__(self, rows: CoreStore, secret: bytes, clock: Clock | None = None) -> None:
        self.rows = rows
        self._secret = secret
        self.clock = clock or SystemClock()  # issue times, expiry, last use

    @classmethod
    def for_workspace(
        cls, config: Config, store: Store, clock: Clock | None = None
    ) -> TokenAuthority:
        """On a workspace's SQLite file, signed with its key file."""
        return cls(SqliteCore(store), load_secret(config.workspace), clock)

    @classmethod
    def for_core(cls, core: CoreStore, clock: Clock | None = None) -> TokenAuthority:
        """On any store, signed with its key (on PostgreSQL the one in the database, which
        every daemon on it signs and verifies with)."""
        return cls(core, core.signing_key(), clock)

    # -- issue ------------------------------------------------------------------------------

    def issue(
        self, *, role: str, name: str = "", permissions: list[str] | tuple[str, ...] | None = None,
        project: str | None = None, agent: str | None = None, ttl: timedelta | None = None,
    ) -> IssuedToken:
        """A new signed token; `permissions` narrows the role's set (never widens it)."""
        perms = _permissions(role, permissions)
        now = self.clock.now()
        expires = now + ttl if ttl is not None else None
        token_id = "tok_" + secrets.token_hex(8)
        scope_project, scope_agent = _blank(project), _blank(agent)
        payload: dict[str, object] = {
            "id": token_id, "role": role, "perms": sorted(perms), "proj": scope_project,
            "agent": scope_agent, "iat": int(now.timestamp()),
            "exp": int(expires.timestamp()) if expires else None,
        }
        token = self._sign(payload)
        row = TokenRow(
            id=token_id, name=(name or role)[:100], role=role, permissions=tuple(sorted(perms)),
            scope_project=scope_project, scope_agent=scope_agent, key_hash=_hash(token),
            created_at=format_ts(now), expires_at=format_ts(expires) if expires else None,
            revoked_at=None, last_used_at=None,
        )
        self.rows.insert_token(row)
        return IssuedToken(token, row)

    def _sign(self, payload: dict[str, object]) -> str:
        body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
        signed = f"{PREFIX}.{body}"
        mac = hmac.new(self._secret, signed.encode("ascii"), hashlib.sha256).digest()
        return f"{signed}.{_b64(mac)}"

    # -- verify -----------------------------------------------------------------------------

    def verify(self, token: str) -> Principal:
        """The principal a presented token stands for; Unauthorized (without saying which
        check failed beyond expired/revoked) when it is not valid now."""
        payload = self._payload(token)
        exp = payload.get("exp")
        if isinstance(exp, int) and exp <= self.clock.now().timestamp():
            raise Unauthorized("token expired")
        row = self.rows.get_token(str(payload.get("id")))
        if row is None or not hmac.compare_digest(row.key_hash, _hash(token)):
            raise Unauthorized("invalid token")
        if row.revoked_at is not None:
            raise Unauthorized("token revoked")
        if row.role == LOGIN_ROLE or row.role not in ROLES:
            raise Unauthorized("invalid token")
        return Principal(
            token_id=row.id, name=row.name, role=row.role,
            permissions=frozenset(row.permissions) & ROLES[row.role],
            scope_project=row.scope_project, scope_agent=row.scope_agent,
        )

    def _payload(self, token: str) -> dict[str, object]:
        if not token or len(token) > MAX_TOKEN_CHARS or not token.isascii():
            raise Unauthorized("invalid token")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != PREFIX:
            raise Unauthorized("invalid token")
        signed = f"{parts[0]}.{parts[1]}"
        expected = hmac.new(self._secret, signed.encode("ascii"), hashlib.sha256).digest()
        try:
            given = _unb64(parts[2])
        except ValueError:
            raise Unauthorized("invalid token") from None
        # The signature first: nothing an unauthenticated caller wrote is parsed before it
        # holds, and the parse is bounded all the same (a payload nested 1,000 levels deep
        # must be a 401, never a RecursionError).
        if not hmac.compare_digest(expected, given):
            raise Unauthorized("invalid token")
        try:
            payload = json.loads(_unb64(parts[1]))
        except (ValueError, RecursionError):
            raise Unauthorized("invalid token") from None
        if not isinstance(payload, dict):
            raise Unauthorized("invalid token")
        return payload

    def touch(self, token_id: str) -> None:
        """Record use (callers throttle this: it is a write)."""
        self.rows.touch_token(token_id, stamp(self.clock))

    # -- manage -----------------------------------------------------------------------------

    def list(self, *, include_revoked: bool = True) -> list[TokenRow]:
        return self.rows.list_tokens(include_revoked=include_revoked)

    def revoke(self, token_id: str) -> None:
        if not self.rows.revoke_token(token_id, stamp(self.clock)):
            raise NotFound(f"no live token {token_id}")

    # -- one-time login codes ---------------------------------------------------------------

    def login_code(self) -> str:
        """A single-use code, valid for five minutes, that `exchange` turns into a token."""
        code = secrets.token_urlsafe(32)
        now = self.clock.now()
        row = TokenRow(
            id="login_" + secrets.token_hex(8), name="login-link", role=LOGIN_ROLE,
            permissions=(), scope_project=None, scope_agent=None, key_hash=_hash(code),
            created_at=format_ts(now), expires_at=format_ts(now + LOGIN_CODE_TTL),
            revoked_at=None, last_used_at=None,
        )
        self.rows.add_login_code(row, format_ts(now))
        return code

    def exchange(self, code: str) -> IssuedToken:
        """Consume a login code for a dashboard admin token; Unauthorized when the code is
        unknown, used or expired."""
        if not code or len(code) > 200:
            raise Unauthorized("invalid or expired login code")
        found = self.rows.consume_login_code(_hash(code), stamp(self.clock))
        if found is None:
            raise Unauthorized("invalid or expired login code")
        return self.issue(role="admin", name="dashboard", ttl=DASHBOARD_TOKEN_TTL)


def ensure_install_token(config: Config, authority: TokenAuthority) -> bool:
    """Make `.daemon/token` (0600) hold a valid admin token with a week or more left;
    True when a new one was written. Run at `signet init` and at every daemon start."""
    path = config.token_path
    try:
        current = path.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        current = ""
    if current and _good_for_a_while(authority, current):
        return False
    issued = authority.issue(
        role="admin", name=INSTALL_TOKEN_NAME, ttl=timedelta(days=config.auth.token_ttl_days)
    )
    _write_private(path, issued.token + "\n")
    return True


def auth_headers(config: Config) -> dict[str, str]:
    """`Authorization: Bearer <.daemon/token>` for in-tree callers of the daemon's API (empty
    when there is no token file yet)."""
    try:
        token = config.token_path.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return {}
    return {"Authorization": f"Bearer {token}"} if token else {}


def _good_for_a_while(authority: TokenAuthority, token: str) -> bool:
    try:
        principal = authority.verify(token)
    except Unauthorized:
        return False
    row = authority.rows.get_token(principal.token_id)
    if row is None or principal.role != "admin":
        return False
    if row.expires_at is None:
        return True
    left = parse_ts(row.expires_at) - authority.clock.now()
    return left > RENEW_BEFORE


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, replacing it atomically (never world-readable,
    not even for a moment: the temporary file is created 0600)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def refuse_open_bind(config: Config) -> None:
    """ConfigError when the daemon would listen beyond loopback without team/hybrid auth."""
    if is_loopback(config.bind) or config.auth.mode in ("team", "hybrid"):
        return
    raise ConfigError(
        f"refusing to listen on {config.bind}: only a loopback address (127.0.0.1, ::1) is"
        " allowed with auth.mode local; set auth.mode to team or hybrid (and network.mode) in"
        " agent.yaml to serve other machines"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _permissions(role: str, requested: list[str] | tuple[str, ...] | None) -> frozenset[str]:
    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    if requested is None:
        return ROLES[role]
    wanted = frozenset(p.strip() for p in requested if p.strip())
    unknown = sorted(wanted - set(PERMISSIONS))
    if unknown:
        raise InvalidInput(f"unknown permission(s) {', '.join(unknown)} (known: {', '.join(PERMISSIONS)})")
    beyond = sorted(wanted - ROLES[role])
    if beyond:
        raise InvalidInput(f"role {role} cannot carry {', '.join(beyond)}")
    if not wanted:
        raise InvalidInput("a token needs at least one permission")
    return wanted


def _blank(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError("bad base64") from exc
