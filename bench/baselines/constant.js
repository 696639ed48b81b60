// Baseline: the runtime's ceiling on this machine. Answers every request with
// the same small JSON body, reading nothing.
const body = JSON.stringify({ id: 1, name: "constant", latitude: 48.8566, longitude: 2.3522, tags: [] });
const headers = { "Content-Type": "application/json" };

export default {
  fetch() {
    return new Response(body, { headers });
  },
};
