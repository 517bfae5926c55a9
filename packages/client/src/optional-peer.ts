/**
 * Loads a package that the toolkit lists as an optional peer dependency, when the part that needs it is first
 * used: the rest of the toolkit works without it, and a user who picks the part without installing the package
 * is told which package to install instead of getting a bare module-resolution error.
 */
export async function loadOptionalPeer<T>(
  packageName: string,
  part: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingPackage(error, packageName)) {
      throw new Error(
        `${part} needs the package "${packageName}", which is not installed: npm install ${packageName}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

function isMissingPackage(error: unknown, packageName: string): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as Error & { code?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    error.message.includes(`'${packageName}'`)
  );
}
