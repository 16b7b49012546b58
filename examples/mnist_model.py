"""The MNIST network of the PyTorch/XLA documents, and a synthetic, learnable MNIST-shaped data set
(each class is a fixed random 28x28 pattern plus noise), so nothing is downloaded."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MNIST(nn.Module):
    """conv 1->10 k5, bn, pool, conv 10->20 k5, bn, pool, flatten, linear 320->50, 50->10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.bn1 = nn.BatchNorm2d(10)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.bn2 = nn.BatchNorm2d(20)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = self.bn1(x)
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = self.bn2(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def synthetic_mnist(num_batches, batch_size, seed=0, noise=1.0):
    """A list of (images [B,1,28,28], labels [B]) batches drawn around ten class templates."""
    gen = torch.Generator().manual_seed(seed)
    templates = torch.randn(10, 1, 28, 28, generator=gen)
    batches = []
    for _ in range(num_batches):
        labels = torch.randint(0, 10, (batch_size,), generator=gen)
        images = templates[labels] + noise * torch.randn(batch_size, 1, 28, 28, generator=gen)
        batches.append((images, labels))
    return batches
