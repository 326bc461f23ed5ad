"""The agent process's container: the bot is built once per container, rebuilt after a reset, and two
containers (two handlers, two tests) never share one."""

from __future__ import annotations

from sommelier.telegram.consumer import AgentContainer


class RecordingBot:
    def __init__(self, number: int):
        self.number = number
        self.updates: list[tuple[int, int]] = []

    def process(self, update: dict, attempt: int) -> None:
        self.updates.append((update["update_id"], attempt))


def counting_builder():
    built: list[RecordingBot] = []

    def build() -> RecordingBot:
        built.append(RecordingBot(len(built) + 1))
        return built[-1]

    return build, built


def test_the_bot_is_built_on_first_use_and_kept():
    build, built = counting_builder()
    container = AgentContainer(build)
    assert built == []  # nothing at construction: the handler module builds its container at import
    container.process_update({"update_id": 1})
    container.process_update({"update_id": 2}, attempt=2)
    assert len(built) == 1 and built[0].updates == [(1, 1), (2, 2)]


def test_a_reset_builds_a_new_bot_on_the_next_update():
    build, built = counting_builder()
    container = AgentContainer(build)
    container.process_update({"update_id": 1})
    container.reset()
    container.process_update({"update_id": 2})
    assert [bot.updates for bot in built] == [[(1, 1)], [(2, 1)]]


def test_containers_share_nothing():
    first_build, first_built = counting_builder()
    second_build, second_built = counting_builder()
    given = RecordingBot(0)
    AgentContainer(first_build).process_update({"update_id": 1})
    AgentContainer(second_build).process_update({"update_id": 2})
    AgentContainer(bot=given).process_update({"update_id": 3})
    assert first_built[0].updates == [(1, 1)] and second_built[0].updates == [(2, 1)] and given.updates == [(3, 1)]
