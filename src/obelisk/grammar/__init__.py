"""The reference language: grammar, nodes with spans, parser and paths (docs/language.md).

This layer imports neither pydantic nor asyncio (docs/architecture.md).
"""

from obelisk.grammar.nodes import ANY_INDEX as ANY_INDEX
from obelisk.grammar.nodes import WILDCARD as WILDCARD
from obelisk.grammar.nodes import Alternatives as Alternatives
from obelisk.grammar.nodes import Conjunction as Conjunction
from obelisk.grammar.nodes import Escaped as Escaped
from obelisk.grammar.nodes import Expression as Expression
from obelisk.grammar.nodes import Field as Field
from obelisk.grammar.nodes import Index as Index
from obelisk.grammar.nodes import Reference as Reference
from obelisk.grammar.nodes import Segment as Segment
from obelisk.grammar.nodes import Span as Span
from obelisk.grammar.nodes import Wildcard as Wildcard
from obelisk.grammar.nodes import ref as ref
from obelisk.grammar.parser import DAGGER as DAGGER
from obelisk.grammar.parser import is_expression as is_expression
from obelisk.grammar.parser import parse_expression as parse_expression
from obelisk.grammar.parser import parse_reference as parse_reference
from obelisk.grammar.paths import find as find
from obelisk.grammar.paths import path_exists as path_exists
from obelisk.grammar.paths import to_jsonpath as to_jsonpath

__all__ = [
    "ANY_INDEX",
    "Alternatives",
    "Conjunction",
    "DAGGER",
    "Escaped",
    "Expression",
    "Field",
    "Index",
    "Reference",
    "Segment",
    "Span",
    "WILDCARD",
    "Wildcard",
    "find",
    "is_expression",
    "parse_expression",
    "parse_reference",
    "path_exists",
    "ref",
    "to_jsonpath",
]
