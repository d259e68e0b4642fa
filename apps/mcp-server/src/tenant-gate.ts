/**
 * Per-organisation concurrency for database work (security review, finding 1): all
 * organisations share one pool, so without a gate one workspace's expensive calls could hold
 * every connection while another workspace's reads wait. Each organisation may run at most
 * `perOrganization` tool transactions at once on this replica; the rest wait in their own
 * organisation's queue, up to `maxWaitMs`, and are then refused as rate-limited. Other
 * organisations never wait behind them.
 */
export interface TenantGate {
  /** Runs `work` once a slot for `organizationId` is free; `undefined` if none freed in time. */
  run<T>(
    organizationId: string,
    work: () => Promise<T>,
  ): Promise<{ ok: true; value: T } | { ok: false }>;
}

export interface TenantGateOptions {
  perOrganization: number;
  maxWaitMs: number;
}

interface Lane {
  active: number;
  waiting: Array<() => void>;
}

export function createTenantGate(options: TenantGateOptions): TenantGate {
  const lanes = new Map<string, Lane>();

  const acquire = (organizationId: string): Promise<boolean> => {
    const lane = lanes.get(organizationId) ?? { active: 0, waiting: [] };
    lanes.set(organizationId, lane);
    if (lane.active < options.perOrganization) {
      lane.active++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const admit = () => {
        clearTimeout(timer);
        lane.active++;
        resolve(true);
      };
      const timer = setTimeout(() => {
        lane.waiting.splice(lane.waiting.indexOf(admit), 1);
        resolve(false);
      }, options.maxWaitMs);
      lane.waiting.push(admit);
    });
  };

  const release = (organizationId: string) => {
    const lane = lanes.get(organizationId);
    if (!lane) return;
    lane.active--;
    const next = lane.waiting.shift();
    if (next) next();
    else if (lane.active === 0) lanes.delete(organizationId);
  };

  return {
    async run(organizationId, work) {
      if (!(await acquire(organizationId))) return { ok: false };
      try {
        return { ok: true, value: await work() };
      } finally {
        release(organizationId);
      }
    },
  };
}
