"""The address guard's table (tenants/netguard.py): each row an address and, when refused, a
word the refusal must name; `None`: a public host that must pass. Read by the guard's own test
and by the tests of both callers (webhook targets, website sources), so all three hold the
same rows."""

from __future__ import annotations

REFUSED: list[tuple[str, str]] = [
    # IPv4
    ("0.0.0.0", "'this network'"),
    ("0.1.2.3", "'this network'"),
    ("10.0.0.1", "private"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("169.254.169.254", "link-local"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.0.0.8", "IETF protocol assignments"),
    ("192.0.2.1", "documentation"),
    ("192.88.99.1", "6to4 relay anycast"),
    ("192.168.1.1", "private"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.254", "benchmarking"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    # IPv6 without an IPv4 inside
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("fe80::1", "link-local"),
    ("fe80::1%2", "link-local"),
    ("fec0::1", "site-local"),
    ("feff::1", "site-local"),
    ("fc00::1", "unique local"),
    ("fd12:3456:789a::1", "unique local"),
    ("ff02::1", "multicast"),
    ("ff0e::1", "multicast"),
    ("100::1", "discard-only"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("2001:10::1", "IETF protocol assignments"),
    ("2001:2::1", "IETF protocol assignments"),
    ("::2:3:4:5", "not global unicast"),
    ("4000::1", "not global unicast"),
    ("5f00::1", "not global unicast"),
    # IPv4-mapped and IPv4-compatible
    ("::ffff:127.0.0.1", "IPv4-mapped 127.0.0.1, loopback"),
    ("::ffff:10.0.0.1", "IPv4-mapped 10.0.0.1, private"),
    ("::ffff:169.254.169.254", "IPv4-mapped 169.254.169.254, link-local"),
    ("::127.0.0.1", "IPv4-compatible 127.0.0.1, loopback"),
    ("::a9fe:a9fe", "IPv4-compatible 169.254.169.254, link-local"),
    # 6to4: 2002:AABB:CCDD:: carries AA.BB.CC.DD
    ("2002:7f00:1::", "6to4 127.0.0.1, loopback"),
    ("2002:7f00:1:1::1", "6to4 127.0.0.1, loopback"),
    ("2002:a9fe:a9fe::", "6to4 169.254.169.254, link-local"),
    ("2002:c0a8:101::1", "6to4 192.168.1.1, private"),
    ("2002:6440:1::", "6to4 100.64.0.1, shared address space"),
    ("2002::", "6to4 0.0.0.0, 'this network'"),
    # NAT64: the well-known /96 carries the IPv4 address in its last 32 bits; the local-use /48 is refused whole
    ("64:ff9b::7f00:1", "NAT64 127.0.0.1, loopback"),
    ("64:ff9b::a9fe:a9fe", "NAT64 169.254.169.254, link-local"),
    ("64:ff9b::10.0.0.1", "NAT64 10.0.0.1, private"),
    ("64:ff9b:1::808:808", "local-use NAT64"),
    ("64:ff9b:1:ffff::1", "local-use NAT64"),
    # Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC, the client's IPv4 address inverted
    ("2001:0:7f00:1:0:0:f7f7:f7f7", "Teredo server 127.0.0.1, loopback"),
    ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo client 10.0.0.1, private"),
    ("2001:0:4136:e378:8000:63bf:5601:5601", "Teredo client 169.254.169.254, link-local"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo client 127.0.0.1, loopback"),
    # not an address at all
    ("localhost", "not an IP address"),
]

ALLOWED: list[str] = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",   # just below carrier-grade NAT
    "100.128.0.1",      # just above it
    "172.32.0.1",       # just above 172.16/12
    "198.20.0.1",       # just above benchmarking
    "223.255.255.254",  # just below multicast
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "2a00:1450:4001:80b::200e",
    "2001:200::1",      # just above 2001::/23
    "::ffff:8.8.8.8",
    "::8.8.8.8",
    "2002:808:808::",   # 6to4 of 8.8.8.8
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",  # Teredo: server 65.54.227.120, client 8.8.8.8
]
