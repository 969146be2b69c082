"""Fakes of outside services that really speak their wire formats on loopback (never mocks)."""
