/** A secret of the sign-in (the OpenID client's, the trusted proxy's) that follows its file. */
import { fileStamp } from "../system/files.ts";
import { readPrivateSecret } from "../tokens/list.ts";

/** A secret that follows its file: read again when the file changes; none while it cannot be used. */
export class FollowedSecret {
  private stamp: string | undefined = "unread";
  private value: string | undefined;
  problem: string | undefined;

  constructor(
    readonly file: string,
    private readonly of: string,
  ) {}

  current(): string | undefined {
    const stamp = fileStamp(this.file);
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      const read = readPrivateSecret(this.file, this.of, "a secret");
      this.value = "value" in read ? read.value : undefined;
      this.problem = "problem" in read ? read.problem : undefined;
    }
    return this.value;
  }
}
