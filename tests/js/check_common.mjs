// What the rules checks share: reading the games from stdin, failing with one line, comparing.

/** All of stdin as text. */
export function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on("data", (chunk) => chunks.push(chunk));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

/** Prints `message` on stderr and exits 1. */
export function fail(message) {
  console.error(message);
  process.exit(1);
}

/** Whether two JSON values are equal. */
export function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
