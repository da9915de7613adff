import { errorFromResponse } from "@stowage/core";

/** A minimal client of the app's HTTP API: JSON in, JSON out, errors back as StowageErrors. */
export function apiClient(baseUrl: string, apiKey: string) {
  async function request<T>(method: string, path: string, body?: unknown, raw?: Uint8Array): Promise<T> {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...(raw !== undefined ? { "content-type": "application/octet-stream" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : raw !== undefined ? { body: raw } : {}),
    });
    if (!response.ok) throw await errorFromResponse(response, `${method} ${path}`);
    return (await response.json()) as T;
  }
  return {
    get: <T>(path: string) => request<T>("GET", path),
    post: <T>(path: string, body: unknown) => request<T>("POST", path, body),
    put: <T>(path: string, body: unknown) => request<T>("PUT", path, body),
    postBytes: <T>(path: string, bytes: Uint8Array) => request<T>("POST", path, undefined, bytes),
  };
}

export type ApiClient = ReturnType<typeof apiClient>;
