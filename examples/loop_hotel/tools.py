"""Tools of the loop_hotel example: replanning when the state says so.

Turn 1 of ``transcript.jsonl`` searches hotels and optimistically books the
best-rated one; the booking fails (that hotel takes no pets).  Turn 2 sees the
search results in the state and the failed call with its error, and replans:
keep the hotels that take the guest's pet, book the cheapest, and answer::

    obelisk loop --model scripted:examples/loop_hotel/transcript.jsonl \\
        --tools examples/loop_hotel/tools.py --input examples/loop_hotel/input.json
"""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from obelisk import tool


class Hotel(TypedDict):
    id: str
    name: str
    city: str
    rating: float
    price_per_night: float
    pets: list[str]


class Booking(TypedDict):
    confirmation: str
    hotel: str
    guest: str
    nights: int
    pet: str | None
    total: float


HOTELS: list[Hotel] = [
    {
        "id": "h-1",
        "name": "Casa do Largo",
        "city": "Lisbon",
        "rating": 4.8,
        "price_per_night": 140.0,
        "pets": [],
    },
    {
        "id": "h-2",
        "name": "Alfama Patio",
        "city": "Lisbon",
        "rating": 4.5,
        "price_per_night": 115.0,
        "pets": ["dog", "cat"],
    },
    {
        "id": "h-3",
        "name": "Tejo Lofts",
        "city": "Lisbon",
        "rating": 4.2,
        "price_per_night": 98.0,
        "pets": ["dog"],
    },
    {
        "id": "h-4",
        "name": "Ribeira Rooms",
        "city": "Porto",
        "rating": 4.6,
        "price_per_night": 90.0,
        "pets": ["dog"],
    },
]


@tool(pure=True)
def search_hotels(city: str) -> list[Hotel]:
    """Hotels in a city, best rated first."""
    found = [hotel for hotel in HOTELS if hotel["city"].lower() == city.lower()]
    return sorted(found, key=lambda hotel: -hotel["rating"])


@tool(pure=True)
def pet_friendly(hotels: list[Hotel], pet: str) -> list[Hotel]:
    """The hotels that take ``pet``, cheapest first."""
    found = [hotel for hotel in hotels if pet in hotel["pets"]]
    return sorted(found, key=lambda hotel: hotel["price_per_night"])


@tool
def book_hotel(hotel_id: str, guest: str, nights: int, pet: str | None = None) -> Booking:
    """Book ``nights`` nights; raises ValueError when the hotel does not take the pet."""
    hotel = next((h for h in HOTELS if h["id"] == hotel_id), None)
    if hotel is None:
        raise KeyError(f"no hotel {hotel_id!r}")
    if pet is not None and pet not in hotel["pets"]:
        raise ValueError(f"{hotel['name']} does not accept pets of kind {pet!r}")
    return {
        "confirmation": f"bk-{hotel_id}-{nights}n",
        "hotel": hotel["name"],
        "guest": guest,
        "nights": nights,
        "pet": pet,
        "total": round(hotel["price_per_night"] * nights, 2),
    }
