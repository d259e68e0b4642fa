/** What the global setup hands every suite: where the server is and how to log in. */
export interface TestPostgres {
  serverUrl: string;
  template: string;
  prefix: string;
  loginUser: string;
  loginPassword: string;
  /** The maintenance login (`DB_MAINTENANCE_LOGIN_USER`): the backfill's and the purge's role. */
  maintenanceLoginUser: string;
  maintenanceLoginPassword: string;
  /**
   * Where the app login role connects, when it is not `serverUrl`: PgBouncer in transaction
   * mode under `NORTH_TEST_PGBOUNCER=1` (SPEC §10). Suites then run unchanged behind it.
   */
  appServerUrl?: string;
}

/** The same server URL pointed at another database. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The same server URL, logged in as another role. */
export function loginUrl(serverUrl: string, user: string, password: string): string {
  const url = new URL(serverUrl);
  url.username = encodeURIComponent(user);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/** The run's login roles, as `north provision` is given them. */
export function provisionOptions(config: TestPostgres) {
  return {
    loginUser: config.loginUser,
    loginPassword: config.loginPassword,
    maintenanceLoginUser: config.maintenanceLoginUser,
    maintenanceLoginPassword: config.maintenanceLoginPassword,
  };
}
