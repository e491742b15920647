"""``trace/permission-recovery-v0``: a device request that first fails on a blocking setting.

Capability: permission_error_recovery — read the error, find the setting that blocks the request (with the getters),
change it, retry the original call and tell the user.
Domain: device — ``generate_device_world`` worlds and 15 ToolSandbox tools (settings getters/setters, contacts,
messages, location, weather); blockers chain: cellular and the services the weather needs cannot be turned on in
low battery mode; services the task does not need may be off too (distractor settings) and must stay off.
Task kinds: turn_on: "turn on wifi" (cellular, location service) in low battery mode (the paper's example);
send_message: a text to a contact with cellular service off (and low battery mode on with two blockers);
location: "what are my coordinates?" with location service off (and low battery mode on); weather: the
temperature here, with location service and/or wifi off, or low battery mode on.
Knobs: kinds (default all four): task kinds drawn; min_blockers (default 1) and max_blockers (default 3): settings
that block the request; distractor_settings (default 1): unneeded services that are off; contacts (default 4):
contacts besides the user.
Verifier: the gold state hash (the request carried out, the blocking settings changed, distractors left off) and
the required facts: each changed setting's short name and the answer (coordinates, temperature).
Failure it targets: the paper's Appendix F.2, C1: the agent makes the request, gets the error and reports it to the
user instead of fixing it (``flawed_actions()`` plays exactly that).
Example: seed 2: "My phone can't get online. Can you turn the wifi on?"; set_wifi_status fails in low battery mode;
the reference reads and turns off low battery mode, retries set_wifi_status and says so; the flawed solution passes
the PermissionError on, so wifi stays off and the state hash differs.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trace_envs.core import Capability, Plan, Task, UserFact, UserScript
from trace_envs.domains.device import DEVICE, generate_device_world
from trace_envs.domains.device.flaws import give_up_after_blocked_call
from trace_envs.domains.device.tasks import DeviceTaskEnv

Kind = Literal["turn_on", "send_message", "location", "weather"]
SERVICES = ("wifi", "cellular", "location_service")
SETTER = {
    "wifi": "set_wifi_status",
    "cellular": "set_cellular_service_status",
    "location_service": "set_location_service_status",
}
GETTER = {
    "wifi": "get_wifi_status",
    "cellular": "get_cellular_service_status",
    "location_service": "get_location_service_status",
}
WORDS = {"wifi": "wifi", "cellular": "cellular service", "location_service": "location service"}
FACT = {"wifi": "wifi", "cellular": "cellular", "location_service": "location", "low_battery_mode": "low battery"}
"""What the agent must say for each setting it changed (short forms, so wording may vary around them)."""
BLOCKERS: dict[str, tuple[int, ...]] = {
    "turn_on": (1,),
    "send_message": (1, 2),
    "location": (1, 2),
    "weather": (1, 2, 3),
}
"""How many settings each kind can need changed."""
ERROR_SERVICE = {
    "Location service is not enabled": "location_service",
    "Wifi is not enabled": "wifi",
    "Cellular service is not enabled": "cellular",
}
MESSAGES = (
    "Running ten minutes late", "I'll call you tonight", "Can you pick up milk on the way home?",
    "The meeting moved to 3pm", "Happy birthday!", "See you at the station", "Don't forget the tickets",
    "Dinner is at 7", "I landed safely", "Thanks for yesterday",
)  # fmt: skip
TURN_ON_OPENINGS = {
    "wifi": ("Turn on wifi please.", "My phone can't get online. Can you turn the wifi on?"),
    "cellular": ("Turn on cellular service.", "I can't make calls. Please switch my cellular service on."),
    "location_service": ("Please turn on location service.", "My maps app can't find me, turn on location service."),
}
LOCATION_OPENINGS = ("Where am I right now? I need my exact coordinates.", "What are my current GPS coordinates?")
WEATHER_OPENINGS = ("What's the temperature outside right now?", "How warm is it here at the moment?")
ALL_KINDS: tuple[Kind, ...] = ("turn_on", "send_message", "location", "weather")


class PermissionRecoveryKnobs(BaseModel):
    """Difficulty knobs of ``trace/permission-recovery-v0``."""

    model_config = ConfigDict(extra="forbid")

    kinds: list[Kind] = Field(default_factory=lambda: list(ALL_KINDS), min_length=1, description="Task kinds drawn.")
    min_blockers: int = Field(default=1, ge=1, le=3, description="Fewest settings that block the request.")
    max_blockers: int = Field(
        default=3, ge=1, le=3, description="Most settings that block the request (chained: low battery mode blocks "
        "turning the needed services on)."
    )  # fmt: skip
    distractor_settings: int = Field(
        default=1, ge=0, le=2, description="Services the task does not need that are off too (and must stay off)."
    )
    contacts: int = Field(default=4, ge=2, le=12, description="Contacts in the world besides the user.")

    @model_validator(mode="after")
    def _feasible(self) -> PermissionRecoveryKnobs:
        if self.min_blockers > self.max_blockers:
            raise ValueError(f"min_blockers ({self.min_blockers}) must be <= max_blockers ({self.max_blockers})")
        if not self.choices():
            raise ValueError(
                f"no task kind in {self.kinds} has {self.min_blockers}-{self.max_blockers} blockers; "
                f"blockers per kind: {BLOCKERS}"
            )
        return self

    def choices(self) -> list[tuple[Kind, int]]:
        """(kind, blocker count) pairs these knobs allow, in a fixed order."""
        kinds = [k for k in ALL_KINDS if k in self.kinds]
        return [(k, n) for k in kinds for n in BLOCKERS[k] if self.min_blockers <= n <= self.max_blockers]


class PermissionRecoveryEnv(DeviceTaskEnv[PermissionRecoveryKnobs]):
    """Recover from a permission-style tool error: find the blocking setting, change it, retry, tell the user."""

    capability = Capability(
        name="permission_error_recovery",
        description=(
            "Recovering from a permission-style tool error caused by a device setting (low battery mode, a "
            "disabled service): finding the blocking setting, changing it, retrying the original call and telling "
            "the user; lacking when the agent reports the error instead of resolving it."
        ),
        probe="generated_envs.probes.permission_recovery:probe_permission",  # a reference: the module imports only the device kit
        flaws={"device": give_up_after_blocked_call},
        hint=(
            "When a request fails because of a device setting (a power-saving mode, or a service that is switched"
            " off), do not stop at reporting the error. Find out which setting blocks the request, change that "
            "setting, retry the request that failed, and then tell the user what you changed and how it turned "
            "out."
        ),
    )
    domain = DEVICE  # as DeviceTaskEnv has it; declared here, where the contract gate reads it
    max_turns = 20
    tool_names = (
        "search_contacts",
        "get_cellular_service_status",
        "search_messages",
        "send_message_with_phone_number",
        "get_current_location",
        "get_location_service_status",
        "get_wifi_status",
        "search_lat_lon",
        "search_weather_around_lat_lon",
        "get_low_battery_mode_status",
        "set_cellular_service_status",
        "set_location_service_status",
        "set_low_battery_mode_status",
        "set_wifi_status",
        "get_current_timestamp",
    )

    def generate(self, rng: random.Random) -> Task:
        kind, blockers = rng.choice(self.knobs.choices())
        service = rng.choice(SERVICES) if kind == "turn_on" else None
        needed, blocked = self._services(rng, kind, blockers, service)
        settings: dict[str, bool] = {s: s not in blocked for s in SERVICES}
        if kind == "turn_on" or blockers > len(blocked):  # low battery mode is one of the blockers
            settings = {"low_battery_mode": True, **{s: False for s in SERVICES}}
        else:
            spare = [s for s in SERVICES if s not in needed]
            for s in rng.sample(spare, min(self.knobs.distractor_settings, len(spare))):
                settings[s] = False
        world = generate_device_world(
            rng, n_contacts=self.knobs.contacts, n_messages=2, n_reminders=1, settings=settings
        )
        plan = Plan(DEVICE, world)
        builders = {
            "turn_on": self._build_turn_on,
            "send_message": self._build_send_message,
            "location": self._build_location,
            "weather": self._build_weather,
        }
        opening, changed, facts = builders[kind](rng, plan, service)
        first_error = plan.errors[0]
        facts = [*facts, *(FACT[s] for s in changed if FACT[s] not in facts)]
        return plan.task(
            goal=f"{opening} (blocked by: {', '.join(changed)}; the user allows changing settings)",
            user=UserScript(
                opening=opening,
                facts=[
                    UserFact(
                        keys=["setting", "low battery", "turn off", "turn on", "enable", "disable", "allow"],
                        answer="Yes, change whatever setting you need to.",
                    )
                ],
            ),
            # the paper's failure: make the request, get the error, and report it instead of fixing it
            flawed_solution=[
                *plan.steps[: plan.expected_errors[0] + 1],
                f'Sorry, I couldn\'t do that: the phone says "{first_error}". You may need to change a setting.',
            ],
            required_facts=facts,
            metadata={"kind": kind, "blockers": blockers, "changed": changed, "first_error": first_error},
        )

    def _build_turn_on(self, rng: random.Random, plan: Plan, service: str | None) -> tuple[str, list[str], list[str]]:
        """Turn a service on in low battery mode: the opening, the settings changed, the facts to say."""
        assert service is not None
        opening = rng.choice(TURN_ON_OPENINGS[service])
        changed, _ = self._recover(plan, SETTER[service], {"on": True})
        plan.say(
            f"Low battery mode was blocking it, so I turned low battery mode off and turned your {WORDS[service]} on."
        )
        return opening, changed, [FACT[service]]

    def _build_send_message(
        self, rng: random.Random, plan: Plan, service: str | None
    ) -> tuple[str, list[str], list[str]]:
        """Text a contact with cellular service off (and low battery mode on with two blockers)."""
        contact = rng.choice(plan.state.CONTACT[1:])
        content = rng.choice(MESSAGES)
        opening = f'Send a text to {contact.name} saying "{content}".'
        found = plan.call("search_contacts", name=contact.name)
        if not found or found[0]["person_id"] != contact.person_id:
            raise RuntimeError(f"search_contacts does not find {contact.name} first: {found}")
        changed, _ = self._recover(
            plan, "send_message_with_phone_number", {"phone_number": contact.phone_number, "content": content}
        )
        first = (contact.name or "").split()[0]
        plan.say(f"I sent your message to {first}. {self._changed_text(changed)}")
        return opening, changed, []

    def _build_location(self, rng: random.Random, plan: Plan, service: str | None) -> tuple[str, list[str], list[str]]:
        """The user's coordinates with location service off (and low battery mode on with two blockers)."""
        opening = rng.choice(LOCATION_OPENINGS)
        changed, here = self._recover(plan, "get_current_location", {})
        plan.say(
            f"You are at latitude {here['latitude']}, longitude {here['longitude']}. {self._changed_text(changed)}"
        )
        return opening, changed, [str(here["latitude"]), str(here["longitude"])]

    def _build_weather(self, rng: random.Random, plan: Plan, service: str | None) -> tuple[str, list[str], list[str]]:
        """The temperature here with location service and/or wifi off, or low battery mode on."""
        opening = rng.choice(WEATHER_OPENINGS)
        changed, weather = self._recover(plan, "search_weather_around_lat_lon", {})
        temperature = weather["current_temperature"]
        plan.say(f"It is {temperature} degrees Celsius right now. {self._changed_text(changed)}")
        return opening, changed, [str(temperature)]

    @staticmethod
    def _services(rng: random.Random, kind: Kind, blockers: int, service: str | None) -> tuple[list[str], list[str]]:
        """The services a task needs, and those of them that start off (without low battery mode)."""
        if kind == "turn_on":
            assert service is not None
            return [service], [service]
        if kind == "send_message":
            return ["cellular"], ["cellular"]
        if kind == "location":
            return ["location_service"], ["location_service"]
        needed = ["location_service", "wifi"]
        if blockers == 1:
            return needed, [rng.choice(needed)]
        return needed, list(needed)

    @staticmethod
    def _recover(plan: Plan, name: str, arguments: dict[str, Any]) -> tuple[list[str], Any]:
        """Try the call; on a blocking error diagnose with the getter, fix the setting (turning low battery
        mode off first when it blocks the fix) and retry, until the call succeeds.

        Returns the settings changed, in order, and the successful call's value."""
        changed: list[str] = []
        ok, result = plan.attempt(name, **arguments)
        while not ok:
            if "low battery mode" in result:
                plan.call("get_low_battery_mode_status")
                plan.call("set_low_battery_mode_status", on=False)
                changed.append("low_battery_mode")
            else:
                service = next(s for text, s in ERROR_SERVICE.items() if text in result)
                plan.call(GETTER[service])
                fixed, _ = plan.attempt(SETTER[service], on=True)
                if not fixed:
                    plan.call("get_low_battery_mode_status")
                    plan.call("set_low_battery_mode_status", on=False)
                    changed.append("low_battery_mode")
                    plan.call(SETTER[service], on=True)
                changed.append(service)
            ok, result = plan.attempt(name, **arguments)
        return changed, result

    @staticmethod
    def _changed_text(changed: list[str]) -> str:
        names = [WORDS.get(s, "low battery mode") for s in changed]
        actions = [f"turned {n} {'off' if n == 'low battery mode' else 'on'}" for n in names]
        return f"It was blocked by your settings, so I {', then '.join(actions)}."
