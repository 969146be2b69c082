"""What both clients share as context managers: a `with` block closes the client at its end."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Closing:
    """Closes itself (`close`) when the `with` block around it ends, however it ends."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()
