"""A complete custom capability env in one file: a library desk where the agent must pick the right
edition among near-identical records (structured data reasoning) and check it out.

    python examples/library_env.py                       # play the oracle on seed 0
    pytest --trace-env trace/example-library-v0 --trace-env-import library_env   # (with examples/ on PYTHONPATH)
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from trace_envs import register_domain, register_env
from trace_envs.core import (
    Capability,
    CapabilityEnv,
    Domain,
    Task,
    ToolCall,
    ToolError,
    Toolset,
    UserScript,
)
from trace_envs.domains.tools import tool


class Book(BaseModel):
    book_id: str
    title: str
    edition: int
    year: int
    available: bool


class Library(BaseModel):
    model_config = ConfigDict(extra="forbid")

    books: dict[str, Book] = Field(default_factory=dict)
    loans: dict[str, str] = Field(default_factory=dict)  # book_id -> member_id


@tool
def search_books(state: Library, title: str) -> list[Book]:
    """Find every edition of a title (case-insensitive substring match).

    Args:
        title: Part of the book's title.
    """
    return [b for b in state.books.values() if title.lower() in b.title.lower()]


@tool(kind="write")
def checkout_book(state: Library, book_id: str, member_id: str) -> str:
    """Lend a book to a member.

    Args:
        book_id: The book's id, such as 'BK-1234'.
        member_id: The member's id, such as 'M-42'.
    """
    book = state.books.get(book_id)
    if book is None:
        raise ToolError(f"Book {book_id} not found")
    if not book.available:
        raise ToolError(f"Book {book_id} is already on loan")
    book.available = False
    state.loans[book_id] = member_id
    return f"Book {book_id} checked out to {member_id}"


LIBRARY = Domain(
    "example_library",
    Library,
    Toolset([search_books, checkout_book]),
    "Check out exactly the edition the member asks for. Tell them its publication year.",
)
register_domain("example_library", f"{__name__}:LIBRARY")

TITLES = ["Deep Water", "The Long Road", "Signals", "Small Gods of Code", "Winter Garden", "Paper Moons"]


class LibraryKnobs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    editions: int = Field(default=4, ge=2, le=12, description="Editions of the requested title on the shelf.")


class LibraryEnv(CapabilityEnv[LibraryKnobs]):
    """'I'd like the newest available edition of <title>': the agent must compare the records."""

    capability = Capability(
        name="structured_data_reasoning",
        description="Search, filter and compare records to find the one that satisfies the user's constraints.",
    )
    domain = LIBRARY
    max_turns = 8

    def generate(self, rng: random.Random) -> Task:
        title = rng.choice(TITLES)
        years = sorted(rng.sample(range(1960, 2025), self.knobs.editions))
        books = {}
        for edition, year in enumerate(years, start=1):
            book_id = f"BK-{rng.randrange(1000, 9999)}{edition}"
            books[book_id] = Book(book_id=book_id, title=title, edition=edition, year=year, available=True)
        newest = max(books.values(), key=lambda b: b.edition)
        newest.available = rng.random() < 0.5  # sometimes the newest edition is out: take the newest available one
        target = max((b for b in books.values() if b.available), key=lambda b: b.edition)
        member = f"M-{rng.randrange(10, 999)}"
        return Task(
            task_id="",
            initial_state=Library(books=books).model_dump(mode="json"),
            goal=f"Check out the newest available edition of {title} for member {member}.",
            user=UserScript(opening=f"Hi, I'm member {member}. I'd like the newest available edition of {title}."),
            solution=[
                ToolCall(name="search_books", arguments={"title": title}),
                ToolCall(name="checkout_book", arguments={"book_id": target.book_id, "member_id": member}),
                f"Done: edition {target.edition} of {title}, published in {target.year}, is checked out to you.",
            ],
            required_facts=[str(target.year)],
            # takes the newest edition without checking that it is available
            flawed_solution=[
                ToolCall(name="search_books", arguments={"title": title}),
                ToolCall(name="checkout_book", arguments={"book_id": newest.book_id, "member_id": member}),
                f"Done: edition {target.edition} of {title}, published in {target.year}, is checked out to you.",
            ],
        )


register_env("trace/example-library-v0", f"{__name__}:LibraryEnv")

if __name__ == "__main__":
    import gymnasium as gym

    from trace_envs.rollout import play_actions

    env = gym.make("trace/example-library-v0", render_mode="ansi")
    env.reset(seed=0)
    reward, _ = play_actions(env, env.unwrapped.oracle_actions(), seed=0)  # type: ignore[attr-defined]
    print(env.render())
    print("reward:", reward)
