# syntax=docker/dockerfile:1
# k8s-runner image: the compiled JavaScript and production dependencies on Node 20, run as a
# numeric non-root user so `runAsNonRoot` can verify it. One image serves both processes:
#   api:        node --optimize-for-size dist/src/api/main.js         (the default command; /v1 on PORT)
#   supervisor: node --optimize-for-size dist/src/supervisor/main.js  (bundle-fetch listener on RUNNER_BUNDLE_PORT)
# Build from the repository root:  docker build -t telorun/k8s-runner:<package version> .
# Without Docker, `npm run image` writes the same image as an archive (docs/deployment.md).

# Pinned to the release `npm run image` ships (NODE_VERSION in src/release/image.ts).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# 1. Compile TypeScript and bundle each process entry (src/release/build.ts; dev dependencies
#    live only in this stage).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY handlers ./handlers
RUN npm run build

# 2. Production dependencies only, no install scripts.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# 3. Runtime: node, the production node_modules, dist/ and package.json ("type": "module").
FROM ${NODE_IMAGE} AS production
# No package managers at runtime: the runner holds cluster credentials, keep the image small.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The kernel image sessions run by default: CI passes the kernel the runner was tested against,
# so a moving tag cannot pair an old kernel with a newer runner. RUNNER_IMAGE in the Deployment
# overrides it. Deliberately no RUNNER_SELF_URL default: it depends on the install namespace.
ARG TELO_SESSION_IMAGE=telorun/node:latest-slim
ENV RUNNER_IMAGE=${TELO_SESSION_IMAGE} \
    PORT=8062 \
    RUNNER_BUNDLE_PORT=8063
# Node's memory settings (src/launch/node-runtime.ts says why): glibc arenas here, the V8 flag
# on each command line.
ENV MALLOC_ARENA_MAX=2
EXPOSE 8062 8063
USER 1000:1000
CMD ["node", "--optimize-for-size", "dist/src/api/main.js"]
