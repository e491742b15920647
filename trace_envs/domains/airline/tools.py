"""The 14 airline tools, behaving exactly as tau2-bench's ``AirlineTools`` (reference section 3).

Each tool is ``fn(db, **arguments)`` over a :class:`FlightDB`, called by
:class:`~trace_envs.domains.tau2_common.Tau2Toolset` with the agent's raw arguments (tau2 does no
validation), so the Python operations here are chosen to fail where and how upstream's fail: the same
checks in the same order, the same messages, and the same bug-compatible behaviour (fixed new ids,
unpadded next-day dates, no seat release, ...; see ``docs/tau2-airline.md``). Write tools journal
every top-level record before changing it (``db.touch``) so that a reset restores it cheaply.

Tool order in ``AIRLINE_TOOLS`` (a :class:`Tau2Toolset`) is upstream's definition order, which is the
order shown to the LLM.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from trace_envs.domains.tau2_common import Tau2Toolset, calculate, transfer_to_human_agents
from trace_envs.domains.tools import tool

from .data_model import (
    AirportCode,
    CabinClass,
    Certificate,
    DirectFlight,
    Flight,
    FlightDateStatusAvailable,
    FlightDB,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)

OWNER = "AirlineTools"
"""Upstream toolkit class name, as CPython names it in argument errors."""

NOW = "2024-05-15T15:00:00"
"""tau2's fixed "current time", stored as ``created_at`` of new reservations."""

NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""Ids tried in order for new reservations (upstream assumes at most three bookings per task)."""

NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""Ids tried in order for certificates sent to a user (at most three per user)."""

AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)
"""The 20 airports ``list_all_airports`` returns, in its order (a fixed list, not read from the DB)."""


# ----- lookups (messages carry the id, unlike retail) ------------------------------------------------
def get_user(db: FlightDB, user_id: str) -> User:
    """The user with this id, or ``ValueError("User {id} not found")``."""
    if user_id not in db.users:
        raise ValueError(f"User {user_id} not found")
    return db.users[user_id]


def get_reservation(db: FlightDB, reservation_id: str) -> Reservation:
    """The reservation with this id, or ``ValueError("Reservation {id} not found")``."""
    if reservation_id not in db.reservations:
        raise ValueError(f"Reservation {reservation_id} not found")
    return db.reservations[reservation_id]


def get_flight(db: FlightDB, flight_number: str) -> Flight:
    """The flight with this number, or ``ValueError("Flight {n} not found")``."""
    if flight_number not in db.flights:
        raise ValueError(f"Flight {flight_number} not found")
    return db.flights[flight_number]


def get_flight_date(db: FlightDB, flight_number: str, date: str) -> Any:
    """The flight's status record on ``date``, or ``Flight {n} not found on date {d}``."""
    flight = get_flight(db, flight_number)
    if date not in flight.dates:
        raise ValueError(f"Flight {flight_number} not found on date {date}")
    return flight.dates[date]


def new_reservation_id(db: FlightDB) -> str:
    """The first of the fixed new-reservation ids not in use (upstream quirk: ids are not random)."""
    for reservation_id in NEW_RESERVATION_IDS:
        if reservation_id not in db.reservations:
            return reservation_id
    raise ValueError("Too many reservations")


def find_direct_flights(
    db: FlightDB,
    date: Any,
    origin: Any = None,
    destination: Any = None,
    leave_after: Any = None,
) -> list[DirectFlight]:
    """Available flights on ``date`` in DB order; ``None`` for origin/destination matches any airport.

    ``leave_after`` compares scheduled departure times as plain strings (upstream's rule).
    """
    results = []
    for flight in db.flights.values():
        if (
            (origin is None or flight.origin == origin)
            and (destination is None or flight.destination == destination)
            and (date in flight.dates)
            and (flight.dates[date].status == "available")
            and (leave_after is None or flight.scheduled_departure_time_est >= leave_after)
        ):
            on_date: Any = flight.dates[date]
            results.append(
                DirectFlight(
                    flight_number=flight.flight_number,
                    origin=flight.origin,
                    destination=flight.destination,
                    status="available",
                    scheduled_departure_time_est=flight.scheduled_departure_time_est,
                    scheduled_arrival_time_est=flight.scheduled_arrival_time_est,
                    available_seats=on_date.available_seats,
                    prices=on_date.prices,
                )
            )
    return results


def charge_for_update(db: FlightDB, user: User, payment_id: str, total_price: Any) -> Payment | None:
    """Charge (or, when negative, credit) ``total_price`` to a saved non-certificate method.

    Gift cards must cover the amount and are debited (a negative total raises the balance); the
    returned Payment is ``None`` when the total is 0. The caller has journaled ``user``.
    """
    if payment_id not in user.payment_methods:
        raise ValueError("Payment method not found")
    method = user.payment_methods[payment_id]
    if method.source == "certificate":
        raise ValueError("Certificate cannot be used to update reservation")
    if method.source == "gift_card" and method.amount < total_price:
        raise ValueError("Gift card balance is not enough")
    if method.source == "gift_card":
        method.amount -= total_price
    if total_price != 0:
        return Payment(payment_id=payment_id, amount=total_price)
    return None


def _flight_infos(flights: Any) -> Any:
    """Dicts become FlightInfo only when *every* element is a dict (upstream's rule); else unchanged."""
    if all(isinstance(item, dict) for item in flights):
        return [FlightInfo(**item) for item in flights]
    return flights


def _passengers(passengers: Any) -> Any:
    if all(isinstance(item, dict) for item in passengers):
        return [Passenger(**item) for item in passengers]
    return passengers


def _payments(payments: Any) -> Any:
    if all(isinstance(item, dict) for item in payments):
        return [Payment(**item) for item in payments]
    return payments


# ----- the tools, in upstream definition order ----------------------------------------------------------
@tool(kind="write")
def book_reservation(
    db: FlightDB,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: FlightType,
    cabin: CabinClass,
    flights: list[FlightInfo | dict[str, Any]],
    passengers: list[Passenger | dict[str, Any]],
    payment_methods: list[Payment | dict[str, Any]],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Insurance,
) -> Reservation:
    """Book a reservation.

    Args:
        user_id: The ID of the user to book the reservation such as 'sara_doe_496'`.
        origin: The IATA code for the origin city such as 'SFO'.
        destination: The IATA code for the destination city such as 'JFK'.
        flight_type: The type of flight such as 'one_way' or 'round_trip'.
        cabin: The cabin class such as 'basic_economy', 'economy', or 'business'.
        flights: An array of objects containing details about each piece of flight.
        passengers: An array of objects containing details about each passenger.
        payment_methods: An array of objects containing details about each payment method.
        total_baggages: The total number of baggage items to book the reservation.
        nonfree_baggages: The number of non-free baggage items to book the reservation.
        insurance: Whether the reservation has insurance.
    """
    # Raw agent arguments: Any, since tau2 never validates them before the call.
    infos: Any = _flight_infos(flights)
    people: Any = _passengers(passengers)
    payments: Any = _payments(payment_methods)
    user = get_user(db, user_id)
    reservation_id = new_reservation_id(db)
    reservation = Reservation(
        reservation_id=reservation_id,
        user_id=user_id,
        origin=origin,
        destination=destination,
        flight_type=flight_type,
        cabin=cabin,
        flights=[],
        passengers=deepcopy(people),
        payment_history=deepcopy(payments),
        created_at=NOW,
        total_baggages=total_baggages,
        nonfree_baggages=nonfree_baggages,
        insurance=insurance,
    )

    total_price = 0
    booked_dates: list[tuple[str, FlightDateStatusAvailable]] = []
    for info in infos:
        flight = get_flight(db, info.flight_number)
        on_date = get_flight_date(db, info.flight_number, info.date)
        if not isinstance(on_date, FlightDateStatusAvailable):
            raise ValueError(f"Flight {info.flight_number} not available on date {info.date}")
        if on_date.available_seats[cabin] < len(people):
            raise ValueError(f"Not enough seats on flight {info.flight_number}")
        price = on_date.prices[cabin]
        reservation.flights.append(
            ReservationFlight(
                flight_number=info.flight_number,
                origin=flight.origin,
                destination=flight.destination,
                date=info.date,
                price=price,
            )
        )
        booked_dates.append((info.flight_number, on_date))
        total_price += price * len(people)

    if insurance == "yes":
        total_price += 30 * len(people)
    total_price += 50 * nonfree_baggages

    for payment in payments:
        if payment.payment_id not in user.payment_methods:
            raise ValueError(f"Payment method {payment.payment_id} not found")
        method = user.payment_methods[payment.payment_id]
        if method.source in {"gift_card", "certificate"} and method.amount < payment.amount:
            raise ValueError(f"Not enough balance in payment method {payment.payment_id}")

    total_payment = sum(payment.amount for payment in payments)
    if total_payment != total_price:
        raise ValueError(f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}")

    # Every check passed: from here on the database changes (journal first).
    db.touch(db.users, user_id)
    for flight_number, _ in booked_dates:
        db.touch(db.flights, flight_number)
    db.touch(db.reservations, reservation_id)
    for payment in payments:
        method = user.payment_methods[payment.payment_id]
        if method.source == "gift_card":
            method.amount -= payment.amount
        elif method.source == "certificate":
            user.payment_methods.pop(payment.payment_id)
    for _, on_date in booked_dates:
        on_date.available_seats[cabin] -= len(people)
    db.reservations[reservation_id] = reservation
    db.users[user_id].reservations.append(reservation_id)
    return reservation


@tool(kind="write")
def cancel_reservation(db: FlightDB, reservation_id: str) -> Reservation:
    """Cancel the whole reservation.

    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'.
    """
    reservation = get_reservation(db, reservation_id)
    db.touch(db.reservations, reservation_id)
    refunds = [
        Payment(payment_id=payment.payment_id, amount=-payment.amount) for payment in reservation.payment_history
    ]
    reservation.payment_history.extend(refunds)
    reservation.status = "cancelled"
    return reservation


@tool(kind="read")
def get_reservation_details(db: FlightDB, reservation_id: str) -> Reservation:
    """Get the details of a reservation.

    Args:
        reservation_id: The reservation ID, such as '8JX2WO'.
    """
    return get_reservation(db, reservation_id)


@tool(kind="read")
def get_user_details(db: FlightDB, user_id: str) -> User:
    """Get the details of a user, including their reservations.

    Args:
        user_id: The user ID, such as 'sara_doe_496'.
    """
    return get_user(db, user_id)


@tool(kind="read")
def list_all_airports(db: FlightDB) -> list[AirportCode]:
    """Returns a list of all available airports."""
    return [AirportCode(iata=iata, city=city) for iata, city in AIRPORTS]


@tool(kind="read")
def search_direct_flight(db: FlightDB, origin: str, destination: str, date: str) -> list[DirectFlight]:
    """Search for direct flights between two cities on a specific date.

    Args:
        origin: The origin city airport in three letters, such as 'JFK'.
        destination: The destination city airport in three letters, such as 'LAX'.
        date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'.
    """
    return find_direct_flights(db, date=date, origin=origin, destination=destination)


@tool(kind="read")
def search_onestop_flight(db: FlightDB, origin: str, destination: str, date: str) -> list[list[DirectFlight]]:
    """Search for one-stop flights between two cities on a specific date.

    Args:
        origin: The origin city airport in three letters, such as 'JFK'.
        destination: The destination city airport in three letters, such as 'LAX'.
        date: The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.
    """
    results = []
    for first in find_direct_flights(db, date=date, origin=origin, destination=None):
        first.date = date
        # Upstream quirk: the next day is "2024-05-" + unpadded day number (month hard-coded).
        second_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first.scheduled_arrival_time_est else date
        for second in find_direct_flights(
            db,
            date=second_date,
            origin=first.destination,
            destination=destination,
            leave_after=first.scheduled_arrival_time_est,
        ):
            second.date = second_date
            results.append([first, second])
    return results


@tool(kind="write")
def send_certificate(db: FlightDB, user_id: str, amount: int) -> str:
    """Send a certificate to a user. Be careful!

    Args:
        user_id: The ID of the user to book the reservation, such as 'sara_doe_496'.
        amount: The amount of the certificate to send.
    """
    user = get_user(db, user_id)
    for certificate_id in NEW_CERTIFICATE_IDS:
        if certificate_id not in user.payment_methods:
            certificate = Certificate(id=certificate_id, amount=amount, source="certificate")
            db.touch(db.users, user_id)
            user.payment_methods[certificate_id] = certificate
            return f"Certificate {certificate_id} added to user {user_id} with amount {amount}."
    raise ValueError("Too many certificates")


@tool(kind="write")
def update_reservation_baggages(
    db: FlightDB, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
) -> Reservation:
    """Update the baggage information of a reservation.

    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'
        total_baggages: The updated total number of baggage items included in the reservation.
        nonfree_baggages: The updated number of non-free baggage items included in the reservation.
        payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.
    """
    reservation = get_reservation(db, reservation_id)
    user = get_user(db, reservation.user_id)
    total_price = 50 * max(0, nonfree_baggages - reservation.nonfree_baggages)
    db.touch(db.users, reservation.user_id)
    db.touch(db.reservations, reservation_id)
    payment = charge_for_update(db, user, payment_id, total_price)
    if payment is not None:
        reservation.payment_history.append(payment)
    reservation.total_baggages = total_baggages
    reservation.nonfree_baggages = nonfree_baggages
    return reservation


@tool(kind="write")
def update_reservation_flights(
    db: FlightDB,
    reservation_id: str,
    cabin: CabinClass,
    flights: list[FlightInfo | dict[str, Any]],
    payment_id: str,
) -> Reservation:
    """Update the flight information of a reservation.

    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'.
        cabin: The cabin class of the reservation
        flights: An array of objects containing details about each piece of flight in the ENTIRE new reservation. Even if the a flight segment is not changed, it should still be included in the array.
        payment_id: The payment id stored in user profile, such as 'credit_card_7815826', 'gift_card_7815826', 'certificate_7815826'.
    """
    infos: Any = _flight_infos(flights)
    reservation = get_reservation(db, reservation_id)
    user = get_user(db, reservation.user_id)

    total_price = 0
    new_flights: list[ReservationFlight] = []
    for info in infos:
        kept = next(
            (
                booked
                for booked in reservation.flights
                if booked.flight_number == info.flight_number
                and booked.date == info.date
                and cabin == reservation.cabin
            ),
            None,
        )
        if kept is not None:
            total_price += kept.price * len(reservation.passengers)
            new_flights.append(kept)
            continue
        flight = get_flight(db, info.flight_number)
        on_date = get_flight_date(db, info.flight_number, info.date)
        if not isinstance(on_date, FlightDateStatusAvailable):
            raise ValueError(f"Flight {info.flight_number} not available on date {info.date}")
        if on_date.available_seats[cabin] < len(reservation.passengers):
            raise ValueError(f"Not enough seats on flight {info.flight_number}")
        segment = ReservationFlight(
            flight_number=info.flight_number,
            origin=flight.origin,
            destination=flight.destination,
            date=info.date,
            price=on_date.prices[cabin],
        )
        total_price += segment.price * len(reservation.passengers)
        new_flights.append(segment)

    total_price -= sum(booked.price for booked in reservation.flights) * len(reservation.passengers)

    db.touch(db.users, reservation.user_id)
    db.touch(db.reservations, reservation_id)
    payment = charge_for_update(db, user, payment_id, total_price)
    if payment is not None:
        reservation.payment_history.append(payment)
    reservation.flights = new_flights
    reservation.cabin = cabin
    # Upstream quirk: seat counts are neither released nor taken when flights change.
    return reservation


@tool(kind="write")
def update_reservation_passengers(
    db: FlightDB,
    reservation_id: str,
    passengers: list[Passenger | dict[str, Any]],
) -> Reservation:
    """Update the passenger information of a reservation.

    Args:
        reservation_id: The reservation ID, such as 'ZFA04Y'.
        passengers: An array of objects containing details about each passenger.
    """
    people: Any = _passengers(passengers)
    reservation = get_reservation(db, reservation_id)
    if len(people) != len(reservation.passengers):
        raise ValueError("Number of passengers does not match")
    db.touch(db.reservations, reservation_id)
    reservation.passengers = deepcopy(people)
    return reservation


@tool(kind="read")
def get_flight_status(db: FlightDB, flight_number: str, date: str) -> str:
    """Get the status of a flight.

    Args:
        flight_number: The flight number.
        date: The date of the flight.
    """
    status: str = get_flight_date(db, flight_number, date).status
    return status


AIRLINE_TOOLS = Tau2Toolset(
    [
        book_reservation,
        calculate,
        cancel_reservation,
        get_reservation_details,
        get_user_details,
        list_all_airports,
        search_direct_flight,
        search_onestop_flight,
        send_certificate,
        transfer_to_human_agents,
        update_reservation_baggages,
        update_reservation_flights,
        update_reservation_passengers,
        get_flight_status,
    ],
    owner=OWNER,
)
"""Every airline tool in upstream definition order (the order tau2 shows them to the LLM)."""
