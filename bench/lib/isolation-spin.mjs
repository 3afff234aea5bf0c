// A handler of bench/isolation.ts: with `spin`, never yields (the hard-stop latency is
// measured on it); without, answers at once (to know a replacement is up).
export default (job) => {
  while (job.payload.spin) {
    // blocks its thread until it is terminated
  }
}
