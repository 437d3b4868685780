// What an initialize request says of its client (basic/lifecycle "Initialization"), fitted to the
// revision negotiated: capabilities that revision does not define are not taken (docs/protocol-eras.md
// "Older revisions").
import type { Implementation } from "@modelcontextprotocol/sdk/types.js";
import { fail } from "../../protocol/errors.js";
import { negotiateSessionVersion } from "../../protocol/era.js";
import { gapsOf, takenClientCapabilities } from "../../protocol/older-revisions.js";
import type { RpcRequest } from "../../protocol/jsonrpc.js";
import type { ClientFields } from "../sessions.js";

/** The negotiated version, what that revision lacks, and the session's client fields. */
export function initializeParams(request: RpcRequest) {
  const params = request.params ?? {};
  const requested = params.protocolVersion;
  const caps = params.capabilities;
  if (typeof requested !== "string" || typeof caps !== "object" || caps === null || Array.isArray(caps))
    throw fail(
      "PORTICO_ERR_MCP_INVALID_PARAMS",
      'initialize needs "protocolVersion" (string) and "capabilities" (object)',
    );
  const protocolVersion = negotiateSessionVersion(requested);
  const gaps = gapsOf(protocolVersion);
  const info = params.clientInfo as Partial<Implementation> | undefined;
  const clientName = `${String(info?.name ?? "")}/${String(info?.version ?? "")}`.slice(0, 64);
  const client = {
    protocolVersion,
    clientCapabilities: takenClientCapabilities(caps, gaps),
    clientName,
  };
  return { protocolVersion, gaps, client: client satisfies ClientFields };
}
