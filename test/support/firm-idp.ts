import { createOrganization, setSsoConnection } from "@north/db";
import { createSecretBox } from "@north/mcp-server";
import type { TestDatabase } from "./database.ts";
import {
  startTestIdp,
  type TestIdp,
  type TestIdpAccount,
  type TestIdpConfig,
  type TestIdpOptions,
} from "./oidc-idp.ts";
import { type SignInServer, TEST_SECRET_KEY } from "./sign-in.ts";

/** The IdP client North is registered as, in every firm of the suites. */
const IDP_CLIENT = { id: "north-at-firm", secret: "firm-idp-client-secret" };

export interface FirmIdp {
  idp: TestIdp;
  organizationId: string;
}

/**
 * A firm that signs in through its own IdP, as an operator sets it up: a real oidc-provider
 * with North registered as a client (redirect to `server`'s callback), an organisation, and
 * `north org sso set` for its domains. The caller adds the members and stops `idp`.
 */
export async function startFirmIdp(
  db: TestDatabase,
  server: SignInServer,
  firm: {
    name: string;
    domains: string[];
    accounts: TestIdpAccount[];
    idTokenClaims?: TestIdpConfig["idTokenClaims"];
  },
  options: TestIdpOptions = {},
): Promise<FirmIdp> {
  const idp = await startTestIdp(
    {
      idTokenClaims: firm.idTokenClaims,
      clients: [
        {
          client_id: IDP_CLIENT.id,
          client_secret: IDP_CLIENT.secret,
          redirect_uris: [`${server.base}/sign-in/callback`],
        },
      ],
      accounts: firm.accounts,
    },
    options,
  );
  const { id: organizationId } = await createOrganization(db.owner.db, { name: firm.name });
  await setSsoConnection(db.owner.db, {
    organizationId,
    issuer: idp.issuer,
    clientId: IDP_CLIENT.id,
    clientSecretEncrypted: await createSecretBox(TEST_SECRET_KEY).encrypt(IDP_CLIENT.secret),
    domains: firm.domains,
  });
  return { idp, organizationId };
}
