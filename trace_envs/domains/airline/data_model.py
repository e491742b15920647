"""Airline state models: the JSON form of every model is tau2-bench's airline ``db.json`` layout.

Field names, types and declaration order follow tau2's ``FlightDB`` (reference section 2.1) because
tool results are dumped in declaration order and the database hash is type-sensitive (``100`` and
``100.0`` differ). Models do not validate on assignment, like upstream: a value a tool assigns is
stored exactly as given. Nested models ignore unknown keys; the top level forbids them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_envs.domains.tau2_common import Tau2DB

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]
MembershipLevel = Literal["gold", "silver", "regular"]

CABIN_CLASSES: tuple[CabinClass, ...] = ("basic_economy", "economy", "business")
"""Cabins in the order the data lists them in seat and price dicts."""


class AirlineModel(BaseModel):
    """Base of every nested airline model: extra keys ignored, no validation on assignment."""

    model_config = ConfigDict(extra="ignore")


def _drop_description(schema: dict[str, Any]) -> None:
    """Keep a model's docstring out of its JSON schema (upstream's argument models have none)."""
    schema.pop("description", None)


class ArgumentModel(AirlineModel):
    """Base of the models that appear inside tool argument schemas (``$defs``): no model description."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=_drop_description)


class AirportCode(AirlineModel):
    """An airport as ``list_all_airports`` returns it."""

    iata: str = Field(description="IATA code")
    city: str = Field(description="City name")


class Name(AirlineModel):
    """A user's name."""

    first_name: str = Field(description="The person's first name")
    last_name: str = Field(description="The person's last name")


class Address(AirlineModel):
    """A user's postal address (``address2`` optional, dumped as null when unset)."""

    address1: str = Field(description="Primary address line")
    address2: str | None = Field(None, description="Secondary address line (optional)")
    city: str = Field(description="City name")
    country: str = Field(description="Country name")
    state: str = Field(description="State or province name")
    zip: str = Field(description="Postal code")


class Payment(ArgumentModel):
    """One payment (negative amount: refund) in a reservation's history; also a booking argument."""

    payment_id: str = Field(description="Unique identifier for the payment")
    amount: int = Field(description="Payment amount in dollars")


class CreditCard(AirlineModel):
    """A saved credit card (no balance)."""

    source: Literal["credit_card"] = Field(description="Indicates this is a credit card payment method")
    id: str = Field(description="Unique identifier for the payment method")
    brand: str = Field(description="Credit card brand (e.g., visa, mastercard)")
    last_four: str = Field(description="Last four digits of the credit card")


class GiftCard(AirlineModel):
    """A gift card with a float balance in ``amount``."""

    source: Literal["gift_card"] = Field(description="Indicates this is a gift card payment method")
    id: str = Field(description="Unique identifier for the gift card")
    amount: float = Field(description="Gift card value amount")


class Certificate(AirlineModel):
    """A travel certificate with a float value in ``amount`` (single use)."""

    source: Literal["certificate"] = Field(description="Indicates this is a certificate payment method")
    id: str = Field(description="Unique identifier for the payment method")
    amount: float = Field(description="Certificate value amount")


PaymentMethod = Annotated[CreditCard | GiftCard | Certificate, Field(discriminator="source")]


class Passenger(ArgumentModel):
    """A passenger on a reservation or saved in a profile; also a tool argument."""

    first_name: str = Field(description="Passenger's first name")
    last_name: str = Field(description="Passenger's last name")
    dob: str = Field(description="Date of birth in YYYY-MM-DD format")


class FlightDateStatusAvailable(AirlineModel):
    """A bookable flight date: seats left and price per cabin."""

    status: Literal["available"] = Field(description="Indicates flight is available for booking")
    available_seats: dict[CabinClass, int] = Field(description="Available seats by class")
    prices: dict[CabinClass, int] = Field(description="Current prices by class")


class FlightDateStatusLanded(AirlineModel):
    """A flight date in the past that landed."""

    status: Literal["landed"] = Field(description="Indicates flight has landed")
    actual_departure_time_est: str = Field(description="Actual departure time in EST (YYYY-MM-DDTHH:MM:SS)")
    actual_arrival_time_est: str = Field(description="Actual arrival time in EST (YYYY-MM-DDTHH:MM:SS)")


class FlightDateStatusCancelled(AirlineModel):
    """A cancelled flight date."""

    status: Literal["cancelled"] = Field(description="Indicates flight was cancelled")


class FlightDateStatusDelayed(AirlineModel):
    """A delayed flight date with new estimates."""

    status: Literal["delayed"] = Field(description="Indicates flight was delayed")
    estimated_departure_time_est: str = Field(description="Estimated departure time in EST (YYYY-MM-DDTHH:MM:SS)")
    estimated_arrival_time_est: str = Field(description="Estimated arrival time in EST (YYYY-MM-DDTHH:MM:SS)")


class FlightDataStatusFlying(AirlineModel):
    """A flight in the air now (upstream's class name keeps its ``Data`` spelling)."""

    status: Literal["flying"] = Field(description="Indicates flight is in flight")
    actual_departure_time_est: str = Field(description="Actual departure time in EST (YYYY-MM-DDTHH:MM:SS)")
    estimated_arrival_time_est: str = Field(description="Estimated arrival time in EST (YYYY-MM-DDTHH:MM:SS)")


class FlightDataStatusOnTime(AirlineModel):
    """A flight later today that is on time (status text has a space: ``on time``)."""

    status: Literal["on time"] = Field(description="Indicates flight is on time")
    estimated_departure_time_est: str = Field(description="Estimated departure time in EST (YYYY-MM-DDTHH:MM:SS)")
    estimated_arrival_time_est: str = Field(description="Estimated arrival time in EST (YYYY-MM-DDTHH:MM:SS)")


FlightDateStatus = Annotated[
    FlightDateStatusAvailable
    | FlightDateStatusLanded
    | FlightDateStatusCancelled
    | FlightDateStatusDelayed
    | FlightDataStatusFlying
    | FlightDataStatusOnTime,
    Field(discriminator="status"),
]

FLIGHT_STATUSES: tuple[str, ...] = ("available", "landed", "cancelled", "delayed", "flying", "on time")


class Flight(AirlineModel):
    """A scheduled flight (one route, one daily time) and its status on each date."""

    flight_number: str = Field(description="Unique flight identifier")
    origin: str = Field(description="IATA code for origin airport")
    destination: str = Field(description="IATA code for destination airport")
    scheduled_departure_time_est: str = Field(description="Scheduled departure time in EST (HH:MM:SS)")
    scheduled_arrival_time_est: str = Field(
        description="Scheduled arrival time in EST (HH:MM:SS, with a '+1' suffix when it lands the next day)"
    )
    dates: dict[str, FlightDateStatus] = Field(description="Flight status by date (YYYY-MM-DD)")


class DirectFlight(AirlineModel):
    """A bookable flight on one date, as the search tools return it (never stored)."""

    flight_number: str = Field(description="Unique flight identifier")
    origin: str = Field(description="IATA code for origin airport")
    destination: str = Field(description="IATA code for destination airport")
    status: Literal["available"] = Field(description="Indicates flight is available for booking")
    scheduled_departure_time_est: str = Field(description="Scheduled departure time in EST (HH:MM:SS)")
    scheduled_arrival_time_est: str = Field(description="Scheduled arrival time in EST (HH:MM:SS)")
    date: str | None = Field(default=None, description="Flight date in YYYY-MM-DD format")
    available_seats: dict[CabinClass, int] = Field(description="Available seats by class")
    prices: dict[CabinClass, int] = Field(description="Current prices by class")


class ReservationFlight(AirlineModel):
    """One booked segment with the per-passenger price paid for it."""

    flight_number: str = Field(description="Unique flight identifier")
    origin: str = Field(description="IATA code for origin airport")
    destination: str = Field(description="IATA code for destination airport")
    date: str = Field(description="Flight date in YYYY-MM-DD format")
    price: int = Field(description="Flight price in dollars.")


class FlightInfo(ArgumentModel):
    """A flight number and date, as the booking tools take them."""

    flight_number: str = Field(description="Flight number, such as 'HAT001'.")
    date: str = Field(description="The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.")


class User(AirlineModel):
    """A customer profile: payment methods by id, saved passengers, membership, reservation ids."""

    user_id: str = Field(description="Unique identifier for the user")
    name: Name = Field(description="User's full name")
    address: Address = Field(description="User's address information")
    email: str = Field(description="User's email address")
    dob: str = Field(description="User's date of birth (YYYY-MM-DD)")
    payment_methods: dict[str, PaymentMethod] = Field(description="User's saved payment methods by id")
    saved_passengers: list[Passenger] = Field(description="User's saved passenger information")
    membership: MembershipLevel = Field(description="User's membership level")
    reservations: list[str] = Field(description="List of user's reservation IDs")


class Reservation(AirlineModel):
    """A booking: itinerary, passengers, payments (refunds negative), bags, insurance, status."""

    reservation_id: str = Field(description="Unique identifier for the reservation")
    user_id: str = Field(description="ID of the user who made the reservation")
    origin: str = Field(description="IATA code for trip origin")
    destination: str = Field(description="IATA code for trip destination")
    flight_type: FlightType = Field(description="Type of trip")
    cabin: CabinClass = Field(description="Selected cabin class")
    flights: list[ReservationFlight] = Field(description="List of flights in the reservation")
    passengers: list[Passenger] = Field(description="List of passengers on the reservation")
    payment_history: list[Payment] = Field(description="History of payments for this reservation")
    created_at: str = Field(description="Timestamp when reservation was created (YYYY-MM-DDTHH:MM:SS)")
    total_baggages: int = Field(description="Total number of bags in reservation")
    nonfree_baggages: int = Field(description="Number of paid bags in reservation")
    insurance: Insurance = Field(description="Whether travel insurance was purchased")
    status: Literal["cancelled"] | None = Field(default=None, description="Status of the reservation")


class FlightDB(Tau2DB):
    """The whole airline database: flights, users and reservations, each keyed by its id.

    Extra top-level keys are forbidden (as upstream); write tools journal records with ``touch``.
    """

    flights: dict[str, Flight] = Field(description="All flights by flight number")
    users: dict[str, User] = Field(description="All users by user id")
    reservations: dict[str, Reservation] = Field(description="All reservations by reservation id")

    def statistics(self) -> dict[str, Any]:
        """Counts of flights, flight dates, users and reservations (for logs and docs)."""
        return {
            "num_flights": len(self.flights),
            "num_flight_dates": sum(len(flight.dates) for flight in self.flights.values()),
            "num_users": len(self.users),
            "num_reservations": len(self.reservations),
        }


AirlineDB = FlightDB
"""Alias: the airline state model under the name the rest of trace-envs uses for domain states."""
