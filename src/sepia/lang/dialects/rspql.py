"""RSP-QL's registration (seed 004, Definitions 11 and 20-22): ``REGISTER RSTREAM <out> AS``
names the output stream and the streaming operator applied to every evaluation."""

from __future__ import annotations

import pyoxigraph as ox
from lark import Token, v_args

from sepia.algebra.query import Registration, RegistrationKind
from sepia.lang.context import Context


class RspqlRules:
    """Transformer methods for ``REGISTER (RSTREAM | ISTREAM | DSTREAM) <out> AS``."""

    ctx: Context

    @v_args(inline=True)
    def register_r2s(
        self, _register: Token, kind: Token, name: ox.NamedNode, _as: Token
    ) -> Registration:
        self.ctx.features.add("register-r2s")
        return Registration(RegistrationKind(str(kind).upper()), name.value)

    @v_args(inline=True)
    def r2s(self, token: Token) -> Token:
        return token
