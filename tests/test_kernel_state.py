"""The kernel's State lists its fields by hand (so a reader and a type checker can follow each): this holds
them to the lists the plan lays out, so a rule or a table added in one place only fails here."""

from explorer.core.compiled.state import SIZE_FIELDS, TABLES, State
from explorer.core.rules import RULE_NAMES


def test_state_fields_are_the_arena_the_rules_the_sizes_and_the_tables_in_order():
    assert State._fields == ("m", *RULE_NAMES, *SIZE_FIELDS, *(name for name, _, _ in TABLES))


def test_every_table_has_a_distinct_name():
    names = [name for name, _, _ in TABLES]
    assert len(names) == len(set(names))
