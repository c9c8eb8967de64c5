"""The soak of the test-bed package (soak.py; bench/soak.py prints it) for one
minute after its warm-up: polling, traps, SETs, link flaps, rediscoveries
and SIGHUPs on a fat tree; ibsnmpd's descriptors and AgentX sessions end
where they began and its memory (in the plain build) within the run's
slack. (bench/README.md has a 30-minute run.)"""
from simfabric import soak  # on the path conftest.py sets


def test_one_minute_soak_ends_flat():
    res = soak.run(1)
    assert not res["sanitizer_reports"], res["sanitizer_reports"]
    assert res["flat"], res["grew"]
    assert not res["never_worked"], res["never_worked"]
