from urllib.parse import parse_qs

from reviewer.components.address import item_query


def test_the_address_names_the_item_and_keeps_the_other_parameters():
    query = item_query({"reviewer": "ann & bo", "trajectory": "old", "spectrum": "old"}, "t1", "s1")
    assert parse_qs(query) == {"reviewer": ["ann & bo"], "trajectory": ["t1"]}


def test_a_spectrum_without_a_trajectory_is_named_by_its_spectrum():
    assert parse_qs(item_query({"reviewer": "ann"}, None, "lamost/<x>")) == {"reviewer": ["ann"], "spectrum": ["lamost/<x>"]}
