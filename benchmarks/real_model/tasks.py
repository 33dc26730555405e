"""The real-model benchmark's tasks: tools, goals and a checker of each final state.

A :class:`Task` is a goal (the loop's ``instructions``), an input, the tools it
offers (2 to 6), an output schema, the output a correct run gives and the world
writes it must make (``effects``: tool name -> how many successful calls).
``check(outcome)`` lists what is wrong with a run (empty: correct).  ``answers`` is a
correct answer sequence, which the ordinary test suite replays through
``ScriptedModel`` to show that each checker accepts a right run and rejects a wrong
one.

The world is in-memory: the tools below read fixed tables, and the ones that write
(``reserve``, ``refund``, ``send_email``, ``create_ticket``) append to
:data:`EFFECTS`, which the runner clears before each run.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import obelisk
from obelisk import tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

EFFECTS: list[tuple[str, dict[str, Any]]] = []
"""(tool, arguments) of every successful world write of the current run."""


class NotFound(Exception):
    """No record with that key."""


class OutOfStock(Exception):
    """Not enough items in stock."""


CUSTOMERS = {
    "c-1": {"id": "c-1", "name": "Ana Lima", "tier": "gold", "email": "ana@example.org"},
    "c-2": {"id": "c-2", "name": "Bo Chen", "tier": "basic", "email": "bo@example.org"},
}
ORDERS = {
    "o-1": {
        "id": "o-1",
        "customer": "c-1",
        "total": 80.0,
        "currency": "EUR",
        "status": "delivered",
    },
    "o-2": {"id": "o-2", "customer": "c-2", "total": 25.5, "currency": "EUR", "status": "shipped"},
    "o-3": {
        "id": "o-3",
        "customer": "c-1",
        "total": 50.0,
        "currency": "USD",
        "status": "delivered",
    },
}
PRICES = {"apple": 0.5, "bread": 2.25, "milk": 1.2}
STOCK = {"apple": 10, "bread": 0, "milk": 4}
RATES = {("USD", "EUR"): 0.9, ("GBP", "EUR"): 1.15, ("EUR", "GBP"): 0.87}
TEMPERATURES = {"Paris": 24.0, "Oslo": 8.0, "Rome": 28.5}
DISCOUNTS = {"gold": 15.0, "basic": 0.0}
USERS = {"ana": {"username": "ana", "active": True}}


def _record(name: str, **arguments: Any) -> None:
    EFFECTS.append((name, arguments))


@tool(pure=True)
def get_customer(customer_id: str) -> dict[str, Any]:
    """A customer record: id, name, tier (gold or basic) and email. Raises NotFound."""
    if customer_id not in CUSTOMERS:
        raise NotFound(f"no customer {customer_id!r}")
    return dict(CUSTOMERS[customer_id])


@tool(pure=True)
def get_order(order_id: str) -> dict[str, Any]:
    """An order record: id, customer (a customer id), total, currency and status.
    Raises NotFound."""
    if order_id not in ORDERS:
        raise NotFound(f"no order {order_id!r}")
    return dict(ORDERS[order_id])


@tool(pure=True)
def get_price(item: str) -> float:
    """The unit price of an item in EUR (items: apple, bread, milk). Raises NotFound."""
    if item not in PRICES:
        raise NotFound(f"no item {item!r}")
    return PRICES[item]


@tool(pure=True)
def check_stock(item: str) -> int:
    """How many units of an item are in stock."""
    return STOCK.get(item, 0)


@tool(pure=True)
def convert(amount: float, from_currency: str, to_currency: str) -> float:
    """An amount converted between currencies (USD, GBP, EUR), rounded to cents."""
    if from_currency == to_currency:
        return amount
    return round(amount * RATES[(from_currency, to_currency)], 2)


@tool(pure=True)
def add(a: float, b: float) -> float:
    """a + b."""
    return round(a + b, 6)


@tool(pure=True)
def multiply(a: float, b: float) -> float:
    """a * b."""
    return round(a * b, 6)


@tool(pure=True)
def max_of(values: list[float]) -> float:
    """The largest of the values."""
    return max(values)


@tool(pure=True)
def at_least(value: float, minimum: float) -> bool:
    """Whether value >= minimum."""
    return value >= minimum


@tool(pure=True)
def temperature(city: str) -> float:
    """Today's temperature in a city, in degrees Celsius (Paris, Oslo, Rome)."""
    if city not in TEMPERATURES:
        raise NotFound(f"no forecast for {city!r}")
    return TEMPERATURES[city]


@tool(pure=True)
def discount_for(tier: str) -> float:
    """The discount, in percent, of a customer tier (gold or basic)."""
    return DISCOUNTS[tier]


@tool(pure=True)
def lookup_user(username: str) -> dict[str, Any]:
    """A user account by username. Raises NotFound when there is none."""
    if username not in USERS:
        raise NotFound(f"no user {username!r}")
    return dict(USERS[username])


@tool(pure=True)
def word_count(text: str) -> int:
    """The number of words in a text."""
    return len(text.split())


@tool(pure=True)
def shipping_quote(country: str, weight_kg: float) -> float:
    """The shipping price in GBP of a parcel to a country code (FR, NO, US)."""
    base = {"FR": 8.0, "NO": 20.0, "US": 30.0}[country]
    return round(base + 2.0 * weight_kg, 2)


@tool(effects={"shop": "write"})
def reserve(item: str, quantity: int) -> dict[str, Any]:
    """Reserve units of an item; raises OutOfStock when there are too few."""
    if STOCK.get(item, 0) < quantity:
        raise OutOfStock(f"only {STOCK.get(item, 0)} {item} in stock, {quantity} asked")
    _record("reserve", item=item, quantity=quantity)
    return {"reservation": f"rs-{item}-{quantity}", "item": item, "quantity": quantity}


@tool(effects={"shop": "write"})
def refund(order_id: str, amount: float) -> dict[str, Any]:
    """Refund an amount of an order to its customer."""
    _record("refund", order_id=order_id, amount=amount)
    return {"refund_id": f"rf-{order_id}", "order_id": order_id, "amount": amount}


@tool(effects={"shop": "write"})
def send_email(to: str, subject: str, body: str) -> dict[str, Any]:
    """Send an e-mail."""
    _record("send_email", to=to, subject=subject, body=body)
    return {"sent": True, "to": to}


@tool(effects={"shop": "write"})
def create_ticket(customer_id: str, summary: str) -> dict[str, Any]:
    """Open a support ticket for a customer."""
    _record("create_ticket", customer_id=customer_id, summary=summary)
    return {"ticket": f"t-{customer_id}", "customer_id": customer_id}


city_brief = obelisk.Tool.from_schema(
    {
        "name": "city_brief",
        "description": "Research a city's weather: gives {city, celsius}.",
        "_delegate": True,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "output": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
            "required": ["city", "celsius"],
        },
    }
)


@dataclass
class Outcome:
    """What a run came to: ``status`` (``completed``, ``failed``, ``stopped``), its
    ``output`` and ``state``, and the world writes it made (``effects``)."""

    status: str
    output: Any
    state: dict[str, Any]
    effects: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _same(value: Any, expected: Any) -> bool:
    """Deep equality, numbers within 0.01."""
    if isinstance(expected, bool) or isinstance(value, bool):
        return value is expected
    if isinstance(expected, (int, float)) and isinstance(value, (int, float)):
        return math.isclose(value, expected, abs_tol=0.01)
    if isinstance(expected, dict) and isinstance(value, dict):
        return value.keys() == expected.keys() and all(
            _same(value[k], expected[k]) for k in expected
        )
    if isinstance(expected, list) and isinstance(value, list):
        return len(value) == len(expected) and all(map(_same, value, expected))
    return bool(value == expected)


Effects = dict[str, list[dict[str, Any]]]


@dataclass
class Task:
    """One benchmark task (see the module docstring)."""

    name: str
    goal: str
    input: dict[str, Any]
    tools: list[Any]
    output_schema: dict[str, Any]
    expected: Any
    answers: list[Any]
    effects: Effects = field(default_factory=dict)
    kind: str = "lookup"

    def check(self, outcome: Outcome) -> list[str]:
        """What is wrong with ``outcome`` (empty when the task was done right):
        the status, the output against ``expected``, and each world write
        against ``effects`` (tool -> the arguments of each expected call, in order;
        a tool not listed must not have written)."""
        problems = []
        if outcome.status != "completed":
            problems.append(f"status {outcome.status}")
        if not _same(outcome.output, self.expected):
            problems.append(
                f"output {json.dumps(outcome.output)[:120]}, expected {json.dumps(self.expected)}"
            )
        writers = {name for name, _ in outcome.effects} | set(self.effects)
        for name in sorted(writers):
            made = [arguments for made_by, arguments in outcome.effects if made_by == name]
            wanted = self.effects.get(name, [])
            if len(made) != len(wanted) or not all(map(_subset, made, wanted)):
                problems.append(f"{name} wrote {made}, expected {wanted}")
        return problems


def _subset(made: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(_same(made.get(key), value) for key, value in wanted.items())


def _object(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


NUMBER = {"type": "number"}


def _call(tool_name: str, out: str, **arguments: Any) -> dict[str, Any]:
    return {"_tool": tool_name, **arguments, "_outputPath": out}


def _then(output: Any, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"calls": list(calls), "output": output}


def _new_tasks() -> list[Task]:
    t: list[Task] = []

    def add_task(
        name: str,
        kind: str,
        goal: str,
        tools: list[Any],
        schema: dict[str, Any],
        expected: Any,
        answers: list[Any],
        data: dict[str, Any] | None = None,
        effects: Effects | None = None,
    ) -> None:
        t.append(
            Task(name, goal, data or {}, tools, schema, expected, answers, effects or {}, kind)
        )

    add_task(
        "customer_email",
        "lookup",
        "Give the e-mail address of the customer input.customer.",
        [get_customer, get_order],
        {"type": "string"},
        "ana@example.org",
        [_then("†state.c.email", _call("get_customer", "†state.c", customer_id="†input.customer"))],
        {"customer": "c-1"},
    )
    add_task(
        "order_status",
        "lookup",
        "Give the status of the order input.order.",
        [get_order, get_customer],
        {"type": "string"},
        "shipped",
        [_then("†state.o.status", _call("get_order", "†state.o", order_id="†input.order"))],
        {"order": "o-2"},
    )
    add_task(
        "order_total_eur",
        "lookup",
        "Give the total of order input.order converted to EUR.",
        [get_order, convert, add],
        NUMBER,
        45.0,
        [
            _then(None, _call("get_order", "†state.o", order_id="†input.order")),
            _then(
                "†state.eur",
                _call(
                    "convert",
                    "†state.eur",
                    amount="†state.o.total",
                    from_currency="†state.o.currency",
                    to_currency="EUR",
                ),
            ),
        ],
        {"order": "o-3"},
    )
    add_task(
        "price_of_three",
        "lookup",
        "Give the price of input.quantity units of input.item.",
        [get_price, multiply, add],
        NUMBER,
        6.75,
        [
            _then(
                "†state.total",
                _call("get_price", "†state.p", item="†input.item"),
                _call("multiply", "†state.total", a="†state.p", b="†input.quantity"),
            )
        ],
        {"item": "bread", "quantity": 3},
    )
    add_task(
        "basket_total",
        "fan-out",
        "Give the total price of one apple and one milk.",
        [get_price, add, multiply],
        NUMBER,
        1.7,
        [
            _then(
                "†state.total",
                _call("get_price", "†state.a", item="apple"),
                _call("get_price", "†state.m", item="milk"),
                _call("add", "†state.total", a="†state.a", b="†state.m"),
            )
        ],
    )
    add_task(
        "warmest_city",
        "fan-out",
        "Give the highest of today's temperatures in Paris, Oslo and Rome.",
        [temperature, max_of, add],
        NUMBER,
        28.5,
        [
            _then(
                None,
                _call("temperature", "†state.paris", city="Paris"),
                _call("temperature", "†state.oslo", city="Oslo"),
                _call("temperature", "†state.rome", city="Rome"),
            ),
            _then("†state.max", _call("max_of", "†state.max", values=[24.0, 8.0, 28.5])),
        ],
    )
    add_task(
        "average_temperature",
        "fan-out",
        "Give the average of today's temperatures in Paris and Rome.",
        [temperature, add, multiply],
        NUMBER,
        26.25,
        [
            _then(
                "†state.avg",
                _call("temperature", "†state.p", city="Paris"),
                _call("temperature", "†state.r", city="Rome"),
                _call("add", "†state.sum", a="†state.p", b="†state.r"),
                _call("multiply", "†state.avg", a="†state.sum", b=0.5),
            )
        ],
    )
    add_task(
        "total_of_orders",
        "fan-out",
        "Give the sum of the totals of orders o-1 and o-2.",
        [get_order, add, convert],
        NUMBER,
        105.5,
        [
            _then(
                "†state.sum",
                _call("get_order", "†state.a", order_id="o-1"),
                _call("get_order", "†state.b", order_id="o-2"),
                _call("add", "†state.sum", a="†state.a.total", b="†state.b.total"),
            )
        ],
    )
    add_task(
        "order_customer_name",
        "lookup",
        "Give the name of the customer who placed order input.order.",
        [get_order, get_customer],
        {"type": "string"},
        "Bo Chen",
        [
            _then(
                "†state.c.name",
                _call("get_order", "†state.o", order_id="†input.order"),
                _call("get_customer", "†state.c", customer_id="†state.o.customer"),
            )
        ],
        {"order": "o-2"},
    )
    add_task(
        "customer_discount",
        "lookup",
        "Give the discount in percent of customer input.customer's tier.",
        [get_customer, discount_for, multiply],
        NUMBER,
        15.0,
        [
            _then(
                "†state.d",
                _call("get_customer", "†state.c", customer_id="†input.customer"),
                _call("discount_for", "†state.d", tier="†state.c.tier"),
            )
        ],
        {"customer": "c-1"},
    )
    add_task(
        "shipping_cost_eur",
        "lookup",
        "Give the shipping price in EUR of a 2 kg parcel to NO.",
        [shipping_quote, convert, add],
        NUMBER,
        27.6,
        [
            _then(
                "†state.eur",
                _call("shipping_quote", "†state.gbp", country="NO", weight_kg=2.0),
                _call(
                    "convert",
                    "†state.eur",
                    amount="†state.gbp",
                    from_currency="GBP",
                    to_currency="EUR",
                ),
            )
        ],
    )
    add_task(
        "count_words",
        "lookup",
        "Give the number of words in input.text.",
        [word_count, add],
        {"type": "integer"},
        7,
        [_then("†state.n", _call("word_count", "†state.n", text="†input.text"))],
        {"text": "the quick brown fox jumps over dogs"},
    )
    add_task(
        "stock_enough",
        "branch",
        "Say (true or false) whether at least 5 apples are in stock.",
        [check_stock, at_least, reserve],
        {"type": "boolean"},
        True,
        [
            _then(
                "†state.ok",
                _call("check_stock", "†state.n", item="apple"),
                _call("at_least", "†state.ok", value="†state.n", minimum=5),
            )
        ],
    )
    add_task(
        "user_exists",
        "branch",
        "Say (true or false) whether user input.username exists; "
        "lookup_user fails when it does not.",
        [lookup_user, word_count],
        {"type": "boolean"},
        False,
        [
            _then(
                None,
                _call("lookup_user", "†state.user || †state.missing", username="†input.username"),
            ),
            _then(False),
        ],
        {"username": "zed"},
    )
    add_task(
        "reserve_milk",
        "write",
        "Reserve 2 milk and give the reservation id.",
        [check_stock, reserve, get_price],
        {"type": "string"},
        "rs-milk-2",
        [
            _then(
                "†state.r.reservation",
                _call("reserve", "†state.r || †state.failed", item="milk", quantity=2),
            )
        ],
        effects={"reserve": [{"item": "milk", "quantity": 2}]},
    )
    add_task(
        "reserve_or_ticket",
        "branch",
        "Reserve 2 bread for customer c-2. If the reservation fails, open a support ticket for c-2 "
        "instead, with a short summary. Give the ticket id, or the reservation id if it worked.",
        [reserve, create_ticket, check_stock],
        {"type": "string"},
        "t-c-2",
        [
            _then(None, _call("reserve", "†state.r || †state.failed", item="bread", quantity=2)),
            _then(
                "†state.t.ticket",
                _call("create_ticket", "†state.t", customer_id="c-2", summary="bread out of stock"),
            ),
        ],
        effects={"create_ticket": [{"customer_id": "c-2"}]},
    )
    add_task(
        "refund_order",
        "write",
        "Refund the full total of order input.order. Give the refund id.",
        [get_order, refund, get_customer],
        {"type": "string"},
        "rf-o-1",
        [
            _then(
                "†state.r.refund_id",
                _call("get_order", "†state.o", order_id="†input.order"),
                _call("refund", "†state.r", order_id="†input.order", amount="†state.o.total"),
            )
        ],
        {"order": "o-1"},
        {"refund": [{"order_id": "o-1", "amount": 80.0}]},
    )
    add_task(
        "refund_unknown_order",
        "branch",
        "Refund order input.order in full. If the order cannot be found, open a support ticket for "
        "customer input.customer instead. Give the refund id or the ticket id.",
        [get_order, refund, create_ticket],
        {"type": "string"},
        "t-c-1",
        [
            _then(None, _call("get_order", "†state.o || †state.missing", order_id="†input.order")),
            _then(
                "†state.t.ticket",
                _call(
                    "create_ticket",
                    "†state.t",
                    customer_id="†input.customer",
                    summary="order o-9 not found",
                ),
            ),
        ],
        {"order": "o-9", "customer": "c-1"},
        {"create_ticket": [{"customer_id": "c-1"}]},
    )
    add_task(
        "email_customer",
        "write",
        "Send customer input.customer an e-mail with subject 'Your order' and body input.body. "
        "Give the address it went to.",
        [get_customer, send_email, get_order],
        {"type": "string"},
        "bo@example.org",
        [
            _then(
                "†state.m.to",
                _call("get_customer", "†state.c", customer_id="†input.customer"),
                _call(
                    "send_email",
                    "†state.m",
                    to="†state.c.email",
                    subject="Your order",
                    body="†input.body",
                ),
            )
        ],
        {"customer": "c-2", "body": "It has shipped."},
        {"send_email": [{"to": "bo@example.org", "subject": "Your order"}]},
    )
    add_task(
        "ticket_for_order",
        "write",
        "Open a support ticket, summary input.summary, for the customer of order input.order. "
        "Give the ticket id.",
        [get_order, create_ticket, get_customer],
        {"type": "string"},
        "t-c-2",
        [
            _then(
                "†state.t.ticket",
                _call("get_order", "†state.o", order_id="†input.order"),
                _call(
                    "create_ticket",
                    "†state.t",
                    customer_id="†state.o.customer",
                    summary="†input.summary",
                ),
            )
        ],
        {"order": "o-2", "summary": "parcel is late"},
        {"create_ticket": [{"customer_id": "c-2", "summary": "parcel is late"}]},
    )
    add_task(
        "price_in_gbp",
        "lookup",
        "Give the price of one bread in GBP.",
        [get_price, convert, multiply],
        NUMBER,
        1.96,
        [
            _then(
                "†state.gbp",
                _call("get_price", "†state.p", item="bread"),
                _call(
                    "convert",
                    "†state.gbp",
                    amount="†state.p",
                    from_currency="EUR",
                    to_currency="GBP",
                ),
            )
        ],
    )
    add_task(
        "order_report",
        "fan-out",
        "Give {status, customer_name} for order input.order.",
        [get_order, get_customer, convert, add],
        _object(status="string", customer_name="string"),
        {"status": "delivered", "customer_name": "Ana Lima"},
        [
            _then(
                {"status": "†state.o.status", "customer_name": "†state.c.name"},
                _call("get_order", "†state.o", order_id="†input.order"),
                _call("get_customer", "†state.c", customer_id="†state.o.customer"),
            )
        ],
        {"order": "o-1"},
    )
    add_task(
        "rome_brief",
        "delegate",
        "Use city_brief on Rome and give the temperature it reports.",
        [city_brief, temperature],
        NUMBER,
        28.5,
        [
            _then("†state.b.celsius", _call("city_brief", "†state.b", city="Rome")),
            _then("†state.t", _call("temperature", "†state.t", city="†input.city")),
            _then({"city": "Rome", "celsius": "†state.t"}),
        ],
    )
    add_task(
        "refund_gold_only",
        "branch",
        "Refund order input.order in full only if its customer's tier is gold; "
        "give the refund id, or the text 'not gold'.",
        [get_order, get_customer, refund, discount_for],
        {"type": "string"},
        "rf-o-3",
        [
            _then(
                None,
                _call("get_order", "†state.o", order_id="†input.order"),
                _call("get_customer", "†state.c", customer_id="†state.o.customer"),
            ),
            _then("†state.r.refund_id", _call("refund", "†state.r", order_id="o-3", amount=50.0)),
        ],
        {"order": "o-3"},
        {"refund": [{"order_id": "o-3", "amount": 50.0}]},
    )
    return t


def _example(folder: str) -> Any:
    spec = importlib.util.spec_from_file_location(
        f"examples_{folder}", EXAMPLES / folder / "tools.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _transcript(folder: str) -> list[Any]:
    lines = (EXAMPLES / folder / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _load(folder: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / folder / "input.json").read_text(encoding="utf-8"))


def _expected(folder: str) -> Any:
    return json.loads((EXAMPLES / folder / "expected.json").read_text(encoding="utf-8"))["output"]


def _example_tasks() -> list[Task]:
    payment, refund_ex, hotel = (
        _example("loop_payment"),
        _example("loop_refund"),
        _example("loop_hotel"),
    )
    weather = _example("weather")
    return [
        Task(
            "payment",
            "Charge the customer's card (input) for the amount. "
            "If the charge fails, report the failure (reportFailure) and give "
            "{paid: false, ticket, reason: the error message}; if it succeeds, give "
            "{paid: true, ticket: the receipt id, reason: 'ok'}.",
            _load("loop_payment"),
            [payment.chargeCard, payment.reportFailure],
            _object(paid="boolean", ticket="string", reason="string"),
            _expected("loop_payment"),
            _transcript("loop_payment"),
            kind="example",
        ),
        Task(
            "refund",
            "Refund order input.orderId in full, with input.reason as the reason, "
            "if it is eligible. "
            "Give {confirmation: the refund id, order, refunded: the amount, currency}.",
            _load("loop_refund"),
            [refund_ex.get_order, refund_ex.check_eligibility, refund_ex.issue_refund],
            _object(confirmation="string", order="string", refunded="number", currency="string"),
            _expected("loop_refund"),
            _transcript("loop_refund"),
            kind="example",
        ),
        Task(
            "hotel",
            "Book the best-rated hotel in input.city that accepts input.pet, "
            "for the guest and nights of the input. "
            "Give {hotel: its name, confirmation, nights, total}.",
            _load("loop_hotel"),
            [hotel.search_hotels, hotel.pet_friendly, hotel.book_hotel],
            _object(hotel="string", confirmation="string", nights="integer", total="number"),
            _expected("loop_hotel"),
            _transcript("loop_hotel"),
            kind="example",
        ),
        Task(
            "weather",
            "Get the weather in input.city; plan the park if it is sunny, "
            "else the movies; then announce the plan for the city. Give the announcement.",
            {"city": "Paris"},
            [weather.get_weather, weather.plan_park, weather.plan_movie, weather.announce],
            {"type": "string"},
            "Today in Paris: picnic in the park (24 °C).",
            [
                _then(None, _call("get_weather", "†state.w", city="†input.city")),
                _then(
                    "†state.m",
                    _call("plan_park", "†state.a", weather="†state.w"),
                    _call("announce", "†state.m", activity="†state.a", city="†input.city"),
                ),
            ],
            kind="example",
        ),
    ]


def all_tasks() -> list[Task]:
    """The examples' scenarios first, then the benchmark's own tasks."""
    return _example_tasks() + _new_tasks()


CheckFunction = Callable[[Outcome], list[str]]
