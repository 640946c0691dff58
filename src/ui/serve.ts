// `vc ui`: the fleet of a repository and a target, served on the loopback address only.
import { LocalFleet, type LocalFleetOptions } from "./local.js";
import { startUiServer, uiHandler } from "./server.js";

/** Loopback only: the page shows what the user's own kubeconfig may read, to no one else. */
const UI_HOST = "127.0.0.1";

export interface ServedUi {
  url: string;
  fleet: LocalFleet;
  close(): Promise<void>;
}

/** Reads the fleet once, then serves its page on 127.0.0.1:`port` (0: a free port). */
export async function serveLocalUi(opts: LocalFleetOptions & { port: number }): Promise<ServedUi> {
  const fleet = await LocalFleet.open(opts);
  try {
    const running = await startUiServer(uiHandler({ provider: fleet }), UI_HOST, opts.port);
    return {
      url: running.url,
      fleet,
      close: async () => {
        await running.close();
        await fleet.close();
      },
    };
  } catch (err) {
    await fleet.close();
    throw err;
  }
}
