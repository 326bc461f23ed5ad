"""The agent process's container: the bot is built once per container from the settings, rebuilt when a secret
changed (a rotated key), and two containers (two handlers, two tests) never share one."""

from __future__ import annotations

from sommelier.settings import Settings, load_settings
from sommelier.telegram.consumer import AgentContainer


class RecordingBot:
    def __init__(self, number: int, settings: Settings):
        self.number = number
        self.settings = settings
        self.updates: list[tuple[int, int]] = []

    def process(self, update: dict, attempt: int, deadline=None) -> None:
        self.updates.append((update["update_id"], attempt))


def counting_builder():
    built: list[RecordingBot] = []

    def build(settings: Settings) -> RecordingBot:
        built.append(RecordingBot(len(built) + 1, settings))
        return built[-1]

    return build, built


class Source:
    """Settings as SettingsSource gives them: the same until a secret changes."""

    def __init__(self):
        self.settings = load_settings({})
        self.changed = False

    def rotate(self, token: str) -> None:
        self.settings = load_settings({"TELEGRAM_BOT_TOKEN": token})
        self.changed = True

    def __call__(self) -> tuple[Settings, bool]:
        changed, self.changed = self.changed, False
        return self.settings, changed


def test_the_bot_is_built_on_first_use_and_kept():
    build, built = counting_builder()
    container = AgentContainer(Source(), build=build)
    assert built == []  # nothing at construction: the handler module builds its container at import
    container.process_update({"update_id": 1})
    container.process_update({"update_id": 2}, attempt=2)
    assert len(built) == 1 and built[0].updates == [(1, 1), (2, 2)]


def test_a_rotated_secret_builds_a_new_bot_with_it():
    build, built = counting_builder()
    source = Source()
    container = AgentContainer(source, build=build)
    container.process_update({"update_id": 1})
    source.rotate("123456:rotated-token-0123456789abcdefghijkl")
    container.process_update({"update_id": 2})
    assert [bot.updates for bot in built] == [[(1, 1)], [(2, 1)]]
    assert built[1].settings.telegram.bot_token == "123456:rotated-token-0123456789abcdefghijkl"


def test_containers_share_nothing():
    first_build, first_built = counting_builder()
    second_build, second_built = counting_builder()
    given = RecordingBot(0, Settings())
    AgentContainer(Source(), build=first_build).process_update({"update_id": 1})
    AgentContainer(Source(), build=second_build).process_update({"update_id": 2})
    AgentContainer(bot=given).process_update({"update_id": 3})
    assert first_built[0].updates == [(1, 1)] and second_built[0].updates == [(2, 1)] and given.updates == [(3, 1)]
