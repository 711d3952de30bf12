/**
 * The base-image picker's live list (docs/api.md "Capabilities"): refreshed from Docker Hub at boot and
 * then periodically; a failed refresh keeps the previous list, and before the first success
 * only the default image is offered.
 */
import type { BaseImageCatalogConfig } from "../../config/kube.ts";
import type { Logger } from "../../log.ts";
import { type DockerHubClient, offeredImages, selectTags } from "./image-catalog.ts";

export class ImagePicker {
  #offered: string[];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly config: BaseImageCatalogConfig,
    readonly hub: DockerHubClient,
    readonly log: Logger,
  ) {
    this.#offered = [config.defaultRef];
  }

  /** The images a session may name, the default first. */
  offered(): string[] {
    return this.#offered;
  }

  async refresh(): Promise<void> {
    try {
      const tags = selectTags(await this.hub.listTags(this.config.repository), this.config.filter, this.config.limit);
      this.#offered = offeredImages(this.config.defaultRef, this.config.repository, tags);
    } catch (error) {
      this.log.warn("base-image catalog refresh failed; keeping the previous list", { error });
    }
  }

  /** Refreshes every `refreshSeconds` without keeping the process alive. */
  startRefreshing(): void {
    this.#timer = setInterval(() => void this.refresh(), this.config.refreshSeconds * 1000);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
