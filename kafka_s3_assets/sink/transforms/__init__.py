"""Kafka Connect's Single Message Transforms and predicates, as pure logic over :class:`TransformRecord`.

A chain is parsed from a connector config by :func:`chain.parse_chain` and applied record by record with
:meth:`chain.TransformChain.apply`. Values are in the project's datum form (``schema.connect_schema``).
"""

from .chain import TransformChain, parse_chain
from .errors import TransformError
from .record import Header, TransformRecord

__all__ = ["Header", "TransformChain", "TransformError", "TransformRecord", "parse_chain"]
