/**
 * `bun run provision`: creates or upgrades the roles (`forma`, `app_role`, `north_maintenance`,
 * the app login user, the maintenance login user), ownership, grants and the admin function on `DATABASE_URL`, in one idempotent transaction.
 * Run it after `db:migrate`.
 */
import { provisionDatabase } from "@north/db";

const url = process.env.DATABASE_URL;
const loginUser = process.env.DB_APP_LOGIN_USER ?? "north_app";
if (!url) {
  console.error("DATABASE_URL is not set: it must name a connection allowed to create roles.");
  process.exit(2);
}
await provisionDatabase(url, {
  loginUser,
  loginPassword: process.env.DB_APP_LOGIN_PASSWORD,
  maintenanceLoginUser: process.env.DB_MAINTENANCE_LOGIN_USER,
  maintenanceLoginPassword: process.env.DB_MAINTENANCE_LOGIN_PASSWORD,
});
console.log(JSON.stringify({ provisioned: true, loginUser }));
