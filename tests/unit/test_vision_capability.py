"""Whether a chat model sees images: learned from its refusal of an image part, or stated in LLM_CAPABILITIES."""

from __future__ import annotations

from sommelier.agent.llm.capabilities import (
    IMAGE_NOT_SEEN,
    ModelCapabilities,
    has_images,
    lesson_from_error,
    parse_capabilities,
    without_images,
)

PHOTO = {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}}
WITH_PHOTO = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": [{"type": "text", "text": "Что это?"}, PHOTO]},
]


def test_a_refusal_naming_images_teaches_that_the_model_does_not_see():
    request = {"model": "m", "messages": WITH_PHOTO}
    for said in (
        "This model does not support image input.",
        "Invalid content type. image_url is only supported by certain models.",
        "multimodal content is not allowed for this model",
    ):
        assert lesson_from_error(said, request, ModelCapabilities(), final=False) == {"vision": False}
    text_only = {"model": "m", "messages": [{"role": "user", "content": "Что это?"}]}
    assert lesson_from_error("does not support image input", text_only, ModelCapabilities(), final=False) is None


def test_a_blind_model_gets_words_in_place_of_the_photo():
    assert has_images(WITH_PHOTO) and not has_images(without_images(WITH_PHOTO))
    assert without_images(WITH_PHOTO)[1]["content"] == "Что это?\n\n" + IMAGE_NOT_SEEN
    assert parse_capabilities("vision=false") == {"vision": False}
