// The egress policy's decisions on addresses (docs/architecture.md §5).
import assert from "node:assert/strict";
import { BlockList } from "node:net";
import { describe, it } from "node:test";
import { addCidr, EgressPolicy } from "../../src/egress/policy.js";

const refuses = (policy: EgressPolicy, ip: string) =>
  assert.throws(() => policy.check(ip, "h"), /egress policy refuses/, ip);
const allows = (policy: EgressPolicy, ip: string) => assert.doesNotThrow(() => policy.check(ip, "h"), ip);

describe("the default provider policy", () => {
  const policy = new EgressPolicy();
  it("allows loopback and private addresses (gateways front internal services)", () => {
    for (const ip of ["127.0.0.1", "10.1.2.3", "192.168.1.10", "172.16.0.1", "::1", "fd12::1", "8.8.8.8"])
      allows(policy, ip);
  });
  it("always refuses link-local, metadata, unspecified and multicast addresses", () => {
    for (const ip of [
      "169.254.169.254",
      "169.254.0.1",
      "100.100.100.200",
      "0.0.0.0",
      "fe80::1",
      "fd00:ec2::254",
      "::",
      "224.0.0.1",
      "255.255.255.255",
    ])
      refuses(policy, ip);
  });
  it("sees through IPv4-mapped IPv6 addresses", () => {
    refuses(policy, "::ffff:169.254.169.254");
    allows(policy, "::ffff:10.0.0.1");
  });
});

describe("operator lists", () => {
  it("a deny list refuses its ranges, an allow list narrows to its ranges", () => {
    const denied = new EgressPolicy({ denyCidrs: ["10.0.0.0/8"] });
    refuses(denied, "10.9.9.9");
    allows(denied, "192.168.0.1");
    const narrowed = new EgressPolicy({ allowCidrs: ["192.168.0.0/16"] });
    allows(narrowed, "192.168.3.4");
    refuses(narrowed, "10.0.0.1");
  });
  it("an allow list cannot reopen metadata addresses", () => {
    refuses(new EgressPolicy({ allowCidrs: ["169.254.0.0/16"] }), "169.254.169.254");
  });
  it("CIDRs are validated with a message that shows the fix", () => {
    assert.throws(() => addCidr(new BlockList(), "10.0.0.0/33"), /invalid prefix length \(0–32\)/);
    assert.throws(() => addCidr(new BlockList(), "intranet"), /not a CIDR \(example: 10.0.0.0\/8/);
  });
});
