# A static servebench image for Kubernetes workers (docs/DISTRIBUTED.md):
#   docker build -t servebench .
# CGO_ENABLED=0 builds without NVML, so the image samples no GPU; the
# workers measure a server elsewhere, whose own metrics --url scrapes.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /servebench ./cmd/servebench

FROM scratch
# https targets need the CA bundle; scratch has none.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /servebench /servebench
# Not root: the Job gives the results volume to this group (fsGroup).
USER 65532:65532
ENTRYPOINT ["/servebench"]
