// The TCP connections this process holds open to a port, read from Linux /proc: what a leak of sockets costs a client.
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Inodes of this process's TCP sockets whose remote port is `port` (any state; a socket the process closed is gone
 * from its descriptors even while the kernel finishes the close). Linux only, as the real-server tier's binaries.
 */
export function openSocketsTo(port: number): Set<string> {
  if (!existsSync("/proc/self/fd") || !existsSync("/proc/net/tcp"))
    throw new Error("counting a process's sockets needs Linux /proc");
  const mine = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    let link: string;
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed since the listing
    }
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode) mine.add(inode);
  }
  const out = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const remotePort = parseInt(fields[2].split(":")[1] ?? "", 16);
      if (remotePort === port && mine.has(fields[9])) out.add(fields[9]);
    }
  }
  return out;
}
